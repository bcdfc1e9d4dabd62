package k8smanifest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Object is one decoded document of a manifest file.
type Object struct {
	// File is the file's path relative to the loaded folder; Doc is the
	// document's number in it, from 1.
	File string
	Doc  int
	// Kind and Name are the document's kind and metadata.name.
	Kind, Name string
	// Value is a pointer to the decoded type: *corev1.ConfigMap,
	// *corev1.Secret, *corev1.Service, *appsv1.StatefulSet,
	// *appsv1.Deployment, *PodMonitor or *Kustomization.
	Value any
}

// where names the document in errors: "statefulset.yaml: StatefulSet fluss-iggy".
func (o Object) where() string {
	if o.Name == "" {
		return fmt.Sprintf("%s: document %d (%s)", o.File, o.Doc, o.Kind)
	}
	return fmt.Sprintf("%s: %s %s", o.File, o.Kind, o.Name)
}

// Set is every document of a folder.
type Set struct {
	// Dir is the folder LoadDir read.
	Dir     string
	Objects []Object
}

// PodMonitor is prometheus-operator's monitoring.coreos.com/v1 PodMonitor,
// with the fields the manifests use (strict decoding rejects the others).
type PodMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              PodMonitorSpec `json:"spec"`
}

// PodMonitorSpec is a PodMonitor's spec.
type PodMonitorSpec struct {
	JobLabel            string               `json:"jobLabel,omitempty"`
	Selector            metav1.LabelSelector `json:"selector"`
	NamespaceSelector   *NamespaceSelector   `json:"namespaceSelector,omitempty"`
	PodMetricsEndpoints []PodMetricsEndpoint `json:"podMetricsEndpoints"`
	PodTargetLabels     []string             `json:"podTargetLabels,omitempty"`
}

// NamespaceSelector selects the namespaces a PodMonitor looks in.
type NamespaceSelector struct {
	Any        bool     `json:"any,omitempty"`
	MatchNames []string `json:"matchNames,omitempty"`
}

// PodMetricsEndpoint is one endpoint a PodMonitor scrapes on each pod.
type PodMetricsEndpoint struct {
	Port          string          `json:"port,omitempty"`
	Path          string          `json:"path,omitempty"`
	Scheme        string          `json:"scheme,omitempty"`
	Interval      string          `json:"interval,omitempty"`
	ScrapeTimeout string          `json:"scrapeTimeout,omitempty"`
	Relabelings   []RelabelConfig `json:"relabelings,omitempty"`
}

// RelabelConfig is a Prometheus relabelling rule in prometheus-operator's
// spelling.
type RelabelConfig struct {
	SourceLabels []string `json:"sourceLabels,omitempty"`
	Separator    string   `json:"separator,omitempty"`
	TargetLabel  string   `json:"targetLabel,omitempty"`
	Regex        string   `json:"regex,omitempty"`
	Replacement  string   `json:"replacement,omitempty"`
	Action       string   `json:"action,omitempty"`
}

// Kustomization is a kustomization.yaml, with the fields the manifests use.
type Kustomization struct {
	APIVersion string        `json:"apiVersion"`
	Kind       string        `json:"kind"`
	Namespace  string        `json:"namespace,omitempty"`
	Labels     []LabelsEntry `json:"labels,omitempty"`
	Resources  []string      `json:"resources,omitempty"`
}

// LabelsEntry is one entry of a kustomization's labels.
type LabelsEntry struct {
	Pairs            map[string]string `json:"pairs"`
	IncludeSelectors bool              `json:"includeSelectors,omitempty"`
	IncludeTemplates bool              `json:"includeTemplates,omitempty"`
}

// kinds maps "apiVersion kind" to a new value of the type it decodes into.
var kinds = map[string]func() any{
	"v1 ConfigMap":                        func() any { return new(corev1.ConfigMap) },
	"v1 Secret":                           func() any { return new(corev1.Secret) },
	"v1 Service":                          func() any { return new(corev1.Service) },
	"apps/v1 StatefulSet":                 func() any { return new(appsv1.StatefulSet) },
	"apps/v1 Deployment":                  func() any { return new(appsv1.Deployment) },
	"monitoring.coreos.com/v1 PodMonitor": func() any { return new(PodMonitor) },
	"kustomize.config.k8s.io/v1beta1 Kustomization": func() any { return new(Kustomization) },
}

// LoadDir reads and decodes every .yaml and .yml file under dir. The error
// lists every document that does not decode.
func LoadDir(dir string) (*Set, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && isYAML(p) {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	s := &Set{Dir: dir}
	var errs []error
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f)
		objs, err := loadFile(f, filepath.ToSlash(rel))
		s.Objects = append(s.Objects, objs...)
		errs = append(errs, err)
	}
	return s, errors.Join(errs...)
}

func isYAML(p string) bool { return strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") }

// loadFile decodes the documents of one file; rel names it in errors.
func loadFile(path, rel string) ([]Object, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	var objs []Object
	var errs []error
	for doc := 1; ; doc++ {
		raw, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return objs, fmt.Errorf("%s: document %d: %w", rel, doc, err)
		}
		if len(bytes.TrimSpace(stripComments(raw))) == 0 {
			doc--
			continue
		}
		o, err := decode(raw, rel, doc)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		objs = append(objs, o)
	}
	if len(objs) == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("%s: no document", rel))
	}
	return objs, errors.Join(errs...)
}

// stripComments drops the comment lines of a document, to tell an empty one.
func stripComments(b []byte) []byte {
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' {
			out = append(out, l)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

// decode decodes one document strictly into the type of its kind.
func decode(raw []byte, rel string, doc int) (Object, error) {
	o := Object{File: rel, Doc: doc}
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(raw, &tm); err != nil {
		return o, fmt.Errorf("%s: document %d: %w", rel, doc, err)
	}
	o.Kind = tm.Kind
	newValue, ok := kinds[tm.APIVersion+" "+tm.Kind]
	if !ok {
		return o, fmt.Errorf("%s: document %d: apiVersion %q kind %q is not a kind these manifests may use (%s)", rel, doc, tm.APIVersion, tm.Kind, knownKinds())
	}
	o.Value = newValue()
	if err := decodeStrict(raw, o.Value); err != nil {
		return o, fmt.Errorf("%s: document %d (%s): %w", rel, doc, tm.Kind, err)
	}
	if m, ok := o.Value.(metav1.Object); ok {
		o.Name = m.GetName()
	}
	return o, nil
}

// decodeStrict decodes a YAML document into v as the API server does
// (field names case-sensitive), and refuses unknown and repeated fields:
// the errors name each field by its path ("spec.podManagmentPolicy").
func decodeStrict(raw []byte, v any) error {
	j, err := yaml.YAMLToJSONStrict(raw)
	if err != nil {
		return err
	}
	strict, err := sigsjson.UnmarshalStrict(j, v)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

func knownKinds() string {
	var ks []string
	for k := range kinds {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}
