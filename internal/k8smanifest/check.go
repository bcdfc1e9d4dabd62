package k8smanifest

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// ShardCountEnv is the environment variable of the pipeline's shard.count;
// it must equal the StatefulSet's replicas.
const ShardCountEnv = "SHARD_COUNT"

// Check checks the required fields of every document and that the
// documents agree with each other. Each error names the file, the document
// and the field.
func (s *Set) Check() error {
	var errs []error
	seen := map[string]string{}
	for _, o := range s.Objects {
		key := o.Kind + "/" + o.Name
		if first, dup := seen[key]; dup && o.Name != "" && o.Kind != "Kustomization" {
			errs = append(errs, fmt.Errorf("%s: also defined in %s", o.where(), first))
		}
		seen[key] = o.File
		errs = append(errs, s.checkObject(o))
	}
	errs = append(errs, s.checkKustomizations())
	return errors.Join(errs...)
}

func (s *Set) checkObject(o Object) error {
	if o.Name == "" && o.Kind != "Kustomization" {
		return fmt.Errorf("%s: metadata.name: required", o.where())
	}
	switch v := o.Value.(type) {
	case *appsv1.StatefulSet:
		return errors.Join(s.checkStatefulSet(o, v), s.checkPod(o, v.Spec.Selector, &v.Spec.Template))
	case *appsv1.Deployment:
		return s.checkPod(o, v.Spec.Selector, &v.Spec.Template)
	case *corev1.Service:
		return s.checkService(o, v)
	case *corev1.ConfigMap:
		if len(v.Data)+len(v.BinaryData) == 0 {
			return fmt.Errorf("%s: data: required", o.where())
		}
	case *corev1.Secret:
		if len(v.Data)+len(v.StringData) == 0 {
			return fmt.Errorf("%s: data or stringData: required", o.where())
		}
	case *PodMonitor:
		return s.checkPodMonitor(o, v)
	}
	return nil
}

// checkStatefulSet: replicas set, serviceName naming a headless Service
// that selects the pods, SHARD_COUNT equal to replicas.
func (s *Set) checkStatefulSet(o Object, ss *appsv1.StatefulSet) error {
	var errs []error
	if ss.Spec.Replicas == nil {
		errs = append(errs, fmt.Errorf("%s: spec.replicas: required (the shard count follows it)", o.where()))
	}
	svc, ok := s.find("Service", ss.Spec.ServiceName)
	switch {
	case ss.Spec.ServiceName == "":
		errs = append(errs, fmt.Errorf("%s: spec.serviceName: required", o.where()))
	case !ok:
		errs = append(errs, fmt.Errorf("%s: spec.serviceName: no Service %q in %s", o.where(), ss.Spec.ServiceName, s.Dir))
	default:
		sv := svc.Value.(*corev1.Service)
		if sv.Spec.ClusterIP != corev1.ClusterIPNone {
			errs = append(errs, fmt.Errorf("%s: spec.serviceName: Service %s (%s) is not headless (clusterIP: None)", o.where(), sv.Name, svc.File))
		}
		if !selects(sv.Spec.Selector, ss.Spec.Template.Labels) {
			errs = append(errs, fmt.Errorf("%s: spec.serviceName: Service %s (%s) selector %v does not select the pod template's labels %v", o.where(), sv.Name, svc.File, sv.Spec.Selector, ss.Spec.Template.Labels))
		}
	}
	if ss.Spec.Replicas == nil {
		return errors.Join(errs...)
	}
	for i, c := range ss.Spec.Template.Spec.Containers {
		for j, e := range c.Env {
			if e.Name == ShardCountEnv && e.Value != strconv.Itoa(int(*ss.Spec.Replicas)) {
				errs = append(errs, fmt.Errorf("%s: spec.template.spec.containers[%d].env[%d] %s: %q is not spec.replicas (%d): each pod's shard index is its ordinal, so the count must be the number of pods", o.where(), i, j, ShardCountEnv, e.Value, *ss.Spec.Replicas))
			}
		}
	}
	return errors.Join(errs...)
}

// checkService: ports, a selector that selects a workload's pods, target
// ports that are ports of those pods.
func (s *Set) checkService(o Object, sv *corev1.Service) error {
	if len(sv.Spec.Ports) == 0 {
		return fmt.Errorf("%s: spec.ports: required", o.where())
	}
	if len(sv.Spec.Selector) == 0 {
		return fmt.Errorf("%s: spec.selector: required", o.where())
	}
	pods := s.podsSelectedBy(func(l map[string]string) bool { return selects(sv.Spec.Selector, l) })
	if len(pods) == 0 {
		return fmt.Errorf("%s: spec.selector: %v selects the pods of no StatefulSet or Deployment in %s", o.where(), sv.Spec.Selector, s.Dir)
	}
	var errs []error
	for i, p := range sv.Spec.Ports {
		target := p.TargetPort
		if target.IntVal == 0 && target.StrVal == "" {
			target.IntVal = p.Port
		}
		for _, pod := range pods {
			if !hasPort(pod.Spec.Containers, target.String()) {
				errs = append(errs, fmt.Errorf("%s: spec.ports[%d].targetPort: %s is not a port of the containers of the pods it selects", o.where(), i, target.String()))
				break
			}
		}
	}
	return errors.Join(errs...)
}

// checkPodMonitor: a selector that selects a workload's pods, endpoints on
// their named ports, a jobLabel that is one of their labels.
func (s *Set) checkPodMonitor(o Object, pm *PodMonitor) error {
	sel, err := metav1.LabelSelectorAsSelector(&pm.Spec.Selector)
	if err != nil || sel.Empty() {
		return fmt.Errorf("%s: spec.selector: %v (an empty selector is refused too)", o.where(), err)
	}
	pods := s.podsSelectedBy(func(l map[string]string) bool { return sel.Matches(labels.Set(l)) })
	if len(pods) == 0 {
		return fmt.Errorf("%s: spec.selector: %s selects the pods of no StatefulSet or Deployment in %s", o.where(), sel, s.Dir)
	}
	if len(pm.Spec.PodMetricsEndpoints) == 0 {
		return fmt.Errorf("%s: spec.podMetricsEndpoints: required", o.where())
	}
	var errs []error
	for _, pod := range pods {
		if _, ok := pod.Labels[pm.Spec.JobLabel]; pm.Spec.JobLabel != "" && !ok {
			errs = append(errs, fmt.Errorf("%s: spec.jobLabel: the pods have no label %q (%v)", o.where(), pm.Spec.JobLabel, pod.Labels))
		}
		for i, ep := range pm.Spec.PodMetricsEndpoints {
			if ep.Port == "" || !hasPort(pod.Spec.Containers, ep.Port) {
				errs = append(errs, fmt.Errorf("%s: spec.podMetricsEndpoints[%d].port: %q is not a named port of the pods' containers", o.where(), i, ep.Port))
			}
		}
	}
	return errors.Join(errs...)
}

// checkKustomizations: every kustomization.yaml lists each manifest of its
// folder (and nothing that is not there).
func (s *Set) checkKustomizations() error {
	var errs []error
	for _, o := range s.Objects {
		k, ok := o.Value.(*Kustomization)
		if !ok {
			continue
		}
		dir := path.Dir(o.File)
		listed := map[string]bool{}
		for i, r := range k.Resources {
			listed[path.Clean(path.Join(dir, r))] = true
			if _, err := os.Stat(filepath.Join(s.Dir, dir, r)); err != nil {
				errs = append(errs, fmt.Errorf("%s: resources[%d]: %v", o.File, i, err))
			}
		}
		for _, m := range s.Objects {
			if path.Dir(m.File) == dir && m.Kind != "Kustomization" && !listed[m.File] {
				errs = append(errs, fmt.Errorf("%s: resources: does not list %s (%s), which is in its folder", o.File, path.Base(m.File), m.where()))
				listed[m.File] = true
			}
		}
	}
	return errors.Join(errs...)
}

// find returns the document of that kind and name.
func (s *Set) find(kind, name string) (Object, bool) {
	i := slices.IndexFunc(s.Objects, func(o Object) bool { return o.Kind == kind && o.Name == name })
	if i < 0 {
		return Object{}, false
	}
	return s.Objects[i], true
}

// podsSelectedBy returns the pod templates of the workloads whose labels
// match.
func (s *Set) podsSelectedBy(match func(map[string]string) bool) []*corev1.PodTemplateSpec {
	var out []*corev1.PodTemplateSpec
	for _, o := range s.Objects {
		var t *corev1.PodTemplateSpec
		switch v := o.Value.(type) {
		case *appsv1.StatefulSet:
			t = &v.Spec.Template
		case *appsv1.Deployment:
			t = &v.Spec.Template
		}
		if t != nil && match(t.Labels) {
			out = append(out, t)
		}
	}
	return out
}

// selects reports whether a Service's selector selects labels.
func selects(selector, l map[string]string) bool {
	return len(selector) > 0 && labels.SelectorFromSet(selector).Matches(labels.Set(l))
}

// hasPort reports whether port (a name or a number) is a port of one of
// the containers.
func hasPort(cs []corev1.Container, port string) bool {
	for _, c := range cs {
		for _, p := range c.Ports {
			if p.Name == port || strconv.Itoa(int(p.ContainerPort)) == port {
				return true
			}
		}
	}
	return false
}
