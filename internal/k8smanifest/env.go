package k8smanifest

import (
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// PodTemplate returns the pod template of the StatefulSet or Deployment
// name.
func (s *Set) PodTemplate(name string) (*corev1.PodTemplateSpec, error) {
	for _, o := range s.Objects {
		switch v := o.Value.(type) {
		case *appsv1.StatefulSet:
			if v.Name == name {
				return &v.Spec.Template, nil
			}
		case *appsv1.Deployment:
			if v.Name == name {
				return &v.Spec.Template, nil
			}
		}
	}
	return nil, fmt.Errorf("no StatefulSet or Deployment %q in %s", name, s.Dir)
}

// PodEnv returns the environment the kubelet would give container c of
// pod podName (a StatefulSet's pod is its name, "-", its ordinal): literal
// values, the downward API's fields, the keys of the folder's ConfigMaps
// and Secrets, and resource values. Fields the folder cannot know (the
// namespace, addresses) get stand-ins.
func (s *Set) PodEnv(t *corev1.PodTemplateSpec, c *corev1.Container, podName string) (map[string]string, error) {
	env := map[string]string{}
	for _, e := range c.EnvFrom {
		kind, name := "ConfigMap", ""
		if e.SecretRef != nil {
			kind, name = "Secret", e.SecretRef.Name
		} else if e.ConfigMapRef != nil {
			name = e.ConfigMapRef.Name
		}
		data, _, _ := s.data(kind, name)
		for k, v := range data {
			env[e.Prefix+k] = v
		}
	}
	for _, e := range c.Env {
		v, err := s.envValue(t, c, e, podName)
		if err != nil {
			return nil, fmt.Errorf("container %s env %s: %w", c.Name, e.Name, err)
		}
		env[e.Name] = expandEnv(v, env)
	}
	return env, nil
}

// expandEnv replaces $(NAME) with the value of an earlier variable, as the
// kubelet does.
func expandEnv(v string, env map[string]string) string {
	for k, val := range env {
		v = strings.ReplaceAll(v, "$("+k+")", val)
	}
	return v
}

// stand-ins for the downward API's fields that depend on the cluster.
var fieldStandIns = map[string]string{
	"metadata.namespace": "default", "metadata.uid": "00000000-0000-0000-0000-000000000000",
	"spec.nodeName": "node-0", "spec.serviceAccountName": "default",
	"status.hostIP": "10.0.0.1", "status.podIP": "10.1.0.1",
}

func (s *Set) envValue(t *corev1.PodTemplateSpec, c *corev1.Container, e corev1.EnvVar, podName string) (string, error) {
	from := e.ValueFrom
	switch {
	case from == nil:
		return e.Value, nil
	case from.FieldRef != nil && from.FieldRef.FieldPath == "metadata.name":
		return podName, nil
	case from.FieldRef != nil:
		v, ok := fieldStandIns[from.FieldRef.FieldPath]
		if !ok {
			return "", fmt.Errorf("fieldRef %q is not supported", from.FieldRef.FieldPath)
		}
		return v, nil
	case from.ConfigMapKeyRef != nil:
		return s.value("ConfigMap", from.ConfigMapKeyRef.Name, from.ConfigMapKeyRef.Key)
	case from.SecretKeyRef != nil:
		return s.value("Secret", from.SecretKeyRef.Name, from.SecretKeyRef.Key)
	case from.ResourceFieldRef != nil:
		return resourceValue(t, c, from.ResourceFieldRef)
	}
	return "", fmt.Errorf("valueFrom has no source")
}

func (s *Set) value(kind, name, key string) (string, error) {
	data, file, ok := s.data(kind, name)
	if !ok {
		return "", fmt.Errorf("no %s %q", kind, name)
	}
	v, ok := data[key]
	if !ok {
		return "", fmt.Errorf("%s %s (%s) has no key %q", kind, name, file, key)
	}
	return v, nil
}

// resourceValue is what the kubelet puts into a resourceFieldRef variable:
// the container's request or limit divided by the divisor (default 1),
// rounded up. A limit that is not set is refused here (the kubelet would
// give the node's allocatable amount, which a manifest cannot mean).
func resourceValue(t *corev1.PodTemplateSpec, self *corev1.Container, r *corev1.ResourceFieldSelector) (string, error) {
	c := self
	if r.ContainerName != "" && r.ContainerName != self.Name {
		c = nil
		for i := range t.Spec.Containers {
			if t.Spec.Containers[i].Name == r.ContainerName {
				c = &t.Spec.Containers[i]
			}
		}
		if c == nil {
			return "", fmt.Errorf("containerName: no container %q in the pod", r.ContainerName)
		}
	}
	kind, res, ok := strings.Cut(r.Resource, ".")
	var list corev1.ResourceList
	switch {
	case ok && kind == "limits":
		list = c.Resources.Limits
	case ok && kind == "requests":
		list = c.Resources.Requests
	default:
		return "", fmt.Errorf("resource: %q is not limits.NAME or requests.NAME", r.Resource)
	}
	q, set := list[corev1.ResourceName(res)]
	if !set {
		return "", fmt.Errorf("resource: %s is not set in container %s's resources", r.Resource, c.Name)
	}
	div := resource.MustParse("1")
	if !r.Divisor.IsZero() {
		div = r.Divisor
	}
	v := (q.MilliValue() + div.MilliValue() - 1) / div.MilliValue()
	return strconv.FormatInt(v, 10), nil
}
