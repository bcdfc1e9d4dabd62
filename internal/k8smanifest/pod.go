package k8smanifest

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// checkPod checks a workload's pod template: its selector, and for every
// container the references of its volumes, environment, probes and args.
func (s *Set) checkPod(o Object, sel *metav1.LabelSelector, t *corev1.PodTemplateSpec) error {
	if sel == nil {
		return fmt.Errorf("%s: spec.selector: required", o.where())
	}
	ls, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return fmt.Errorf("%s: spec.selector: %w", o.where(), err)
	}
	if ls.Empty() || !ls.Matches(labels.Set(t.Labels)) {
		return fmt.Errorf("%s: spec.selector: %q does not match the pod template's labels %v", o.where(), ls.String(), t.Labels)
	}
	if len(t.Spec.Containers) == 0 {
		return fmt.Errorf("%s: spec.template.spec.containers: required", o.where())
	}
	errs := []error{s.checkVolumes(o, t)}
	for i := range t.Spec.Containers {
		c := &t.Spec.Containers[i]
		at := fmt.Sprintf("%s: spec.template.spec.containers[%d]", o.where(), i)
		if c.Name == "" || c.Image == "" {
			errs = append(errs, fmt.Errorf("%s: name and image: required", at))
		}
		errs = append(errs, s.checkEnv(at, t, c), checkProbes(at, c))
		files, err := s.MountedFiles(t, c)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", at, err))
			continue
		}
		errs = append(errs, checkArgs(at, t, c, files), checkPipelineVars(at, s.envNames(c), files))
	}
	return errors.Join(errs...)
}

// checkVolumes: every ConfigMap and Secret volume names one of the folder,
// with the keys its items name.
func (s *Set) checkVolumes(o Object, t *corev1.PodTemplateSpec) error {
	var errs []error
	for i, v := range t.Spec.Volumes {
		at := fmt.Sprintf("%s: spec.template.spec.volumes[%d] (%s)", o.where(), i, v.Name)
		switch {
		case v.ConfigMap != nil:
			errs = append(errs, s.checkKeys(at+".configMap", "ConfigMap", v.ConfigMap.Name, itemKeys(v.ConfigMap.Items), v.ConfigMap.Optional))
		case v.Secret != nil:
			errs = append(errs, s.checkKeys(at+".secret", "Secret", v.Secret.SecretName, itemKeys(v.Secret.Items), v.Secret.Optional))
		}
	}
	return errors.Join(errs...)
}

func itemKeys(items []corev1.KeyToPath) []string {
	var keys []string
	for _, it := range items {
		keys = append(keys, it.Key)
	}
	return keys
}

// checkKeys: the ConfigMap or Secret name exists (unless optional) and has
// every key.
func (s *Set) checkKeys(at, kind, name string, keys []string, optional *bool) error {
	if optional != nil && *optional {
		return nil
	}
	data, file, ok := s.data(kind, name)
	if !ok {
		return fmt.Errorf("%s: no %s %q in %s", at, kind, name, s.Dir)
	}
	var errs []error
	for _, k := range keys {
		if _, ok := data[k]; !ok {
			errs = append(errs, fmt.Errorf("%s: %s %s (%s) has no key %q (it has %s)", at, kind, name, file, k, strings.Join(sortedKeys(data), ", ")))
		}
	}
	return errors.Join(errs...)
}

// data returns the keys and values of a ConfigMap or Secret of the folder.
func (s *Set) data(kind, name string) (map[string]string, string, bool) {
	o, ok := s.find(kind, name)
	if !ok {
		return nil, "", false
	}
	out := map[string]string{}
	switch v := o.Value.(type) {
	case *corev1.ConfigMap:
		for k, d := range v.Data {
			out[k] = d
		}
		for k, d := range v.BinaryData {
			out[k] = string(d)
		}
	case *corev1.Secret:
		for k, d := range v.Data {
			out[k] = string(d)
		}
		for k, d := range v.StringData {
			out[k] = d
		}
	}
	return out, o.File, true
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// fieldPaths are the downward API fields an env var may take.
var fieldPaths = []string{"metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.podIP"}

// checkEnv: every reference of the container's environment resolves.
func (s *Set) checkEnv(at string, t *corev1.PodTemplateSpec, c *corev1.Container) error {
	var errs []error
	for j, e := range c.Env {
		eat := fmt.Sprintf("%s.env[%d] %s", at, j, e.Name)
		errs = append(errs, s.checkEnvSource(eat, t, c, e.ValueFrom))
	}
	for j, e := range c.EnvFrom {
		eat := fmt.Sprintf("%s.envFrom[%d]", at, j)
		if e.ConfigMapRef != nil {
			errs = append(errs, s.checkKeys(eat+".configMapRef", "ConfigMap", e.ConfigMapRef.Name, nil, e.ConfigMapRef.Optional))
		}
		if e.SecretRef != nil {
			errs = append(errs, s.checkKeys(eat+".secretRef", "Secret", e.SecretRef.Name, nil, e.SecretRef.Optional))
		}
	}
	return errors.Join(errs...)
}

func (s *Set) checkEnvSource(at string, t *corev1.PodTemplateSpec, c *corev1.Container, from *corev1.EnvVarSource) error {
	switch {
	case from == nil:
		return nil
	case from.ConfigMapKeyRef != nil:
		r := from.ConfigMapKeyRef
		return s.checkKeys(at+".valueFrom.configMapKeyRef", "ConfigMap", r.Name, []string{r.Key}, r.Optional)
	case from.SecretKeyRef != nil:
		r := from.SecretKeyRef
		return s.checkKeys(at+".valueFrom.secretKeyRef", "Secret", r.Name, []string{r.Key}, r.Optional)
	case from.FieldRef != nil:
		if !slices.Contains(fieldPaths, from.FieldRef.FieldPath) {
			return fmt.Errorf("%s.valueFrom.fieldRef.fieldPath: %q is not one of %s", at, from.FieldRef.FieldPath, strings.Join(fieldPaths, ", "))
		}
	case from.ResourceFieldRef != nil:
		_, err := resourceValue(t, c, from.ResourceFieldRef)
		if err != nil {
			return fmt.Errorf("%s.valueFrom.resourceFieldRef: %w", at, err)
		}
	}
	return nil
}

// checkProbes: the port of every HTTP or TCP probe is a port of the
// container (a probe of a port that is not there fails forever).
func checkProbes(at string, c *corev1.Container) error {
	var errs []error
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
	}{{"livenessProbe", c.LivenessProbe}, {"readinessProbe", c.ReadinessProbe}, {"startupProbe", c.StartupProbe}} {
		if p.probe == nil {
			continue
		}
		field, port := "", ""
		switch {
		case p.probe.HTTPGet != nil:
			field, port = "httpGet.port", p.probe.HTTPGet.Port.String()
		case p.probe.TCPSocket != nil:
			field, port = "tcpSocket.port", p.probe.TCPSocket.Port.String()
		default:
			continue
		}
		if !hasPort([]corev1.Container{*c}, port) {
			errs = append(errs, fmt.Errorf("%s.%s.%s: %s is not a port of the container (ports: %s)", at, p.name, field, port, portNames(c)))
		}
	}
	return errors.Join(errs...)
}

func portNames(c *corev1.Container) string {
	var out []string
	for _, p := range c.Ports {
		out = append(out, fmt.Sprintf("%s %d", p.Name, p.ContainerPort))
	}
	return strings.Join(out, ", ")
}

// MountedFiles returns the files the ConfigMap volumes put into the
// container, by their path in the container, with their content.
func (s *Set) MountedFiles(t *corev1.PodTemplateSpec, c *corev1.Container) (map[string]string, error) {
	files := map[string]string{}
	for j, m := range c.VolumeMounts {
		i := slices.IndexFunc(t.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name })
		if i < 0 {
			return nil, fmt.Errorf("volumeMounts[%d].name: no volume %q in spec.template.spec.volumes", j, m.Name)
		}
		v := t.Spec.Volumes[i]
		if v.ConfigMap == nil {
			continue
		}
		data, _, ok := s.data("ConfigMap", v.ConfigMap.Name)
		if !ok {
			continue // checkVolumes says so
		}
		if len(v.ConfigMap.Items) == 0 {
			for k, d := range data {
				files[path.Join(m.MountPath, k)] = d
			}
		}
		for _, it := range v.ConfigMap.Items {
			if d, ok := data[it.Key]; ok {
				files[path.Join(m.MountPath, it.Path)] = d
			}
		}
	}
	return files, nil
}

// checkArgs: an argument that names a file under a ConfigMap mount names
// one of its files.
func checkArgs(at string, t *corev1.PodTemplateSpec, c *corev1.Container, files map[string]string) error {
	var errs []error
	for i, a := range append(slices.Clone(c.Command), c.Args...) {
		for _, m := range c.VolumeMounts {
			if !strings.HasPrefix(a, m.MountPath+"/") || !isConfigMapVolume(t, m.Name) {
				continue
			}
			if _, ok := files[a]; !ok {
				errs = append(errs, fmt.Errorf("%s.args: %q (argument %d) is not a file of the ConfigMap volume %s mounted at %s (it has %s)", at, a, i, m.Name, m.MountPath, strings.Join(sortedKeys(files), ", ")))
			}
		}
	}
	return errors.Join(errs...)
}

func isConfigMapVolume(t *corev1.PodTemplateSpec, name string) bool {
	return slices.ContainsFunc(t.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == name && v.ConfigMap != nil })
}

// envRef matches a Benthos environment variable reference as Benthos's
// config reader does (internal/config/env_vars.go of benthos v4.60.0):
// ${NAME}, ${NAME:default}, either with a |function; ${! ...} (an
// interpolation) and ${{NAME}} (an escaped reference) do not match.
var envRef = regexp.MustCompile(`\$\{([0-9A-Za-z_.]+)(:(?:\$\{[^}]+\}|[^}])*)?(?:\|[0-9A-Za-z]+)?\}`)

// RequiredVars returns the variables a Benthos config uses without a
// default, in order of first use.
func RequiredVars(config string) []string {
	var out []string
	for _, m := range envRef.FindAllStringSubmatch(config, -1) {
		if m[2] == "" && !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// envNames returns the names of the container's environment variables,
// those of envFrom included.
func (s *Set) envNames(c *corev1.Container) map[string]bool {
	set := map[string]bool{}
	for _, e := range c.Env {
		set[e.Name] = true
	}
	for _, e := range c.EnvFrom {
		kind, name := "ConfigMap", ""
		switch {
		case e.ConfigMapRef != nil:
			name = e.ConfigMapRef.Name
		case e.SecretRef != nil:
			kind, name = "Secret", e.SecretRef.Name
		}
		data, _, _ := s.data(kind, name)
		for k := range data {
			set[e.Prefix+k] = true
		}
	}
	return set
}

// checkPipelineVars: every variable a mounted YAML file needs is set in
// the container's environment.
func checkPipelineVars(at string, set map[string]bool, files map[string]string) error {
	var errs []error
	for _, f := range sortedKeys(files) {
		if !isYAML(f) {
			continue
		}
		for _, v := range RequiredVars(files[f]) {
			if !set[v] {
				errs = append(errs, fmt.Errorf("%s.env: %s is not set, and %s uses ${%s} without a default", at, v, f, v))
			}
		}
	}
	return errors.Join(errs...)
}
