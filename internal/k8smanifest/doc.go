// Package k8smanifest validates the Kubernetes manifests of deploy/kubernetes
// offline, without a cluster: the checks CI can make where no API server runs.
//
// LoadDir reads every YAML file of a folder and its subfolders (several
// documents a file), decodes each document by its apiVersion and kind into
// the types of k8s.io/api (ConfigMap, Secret, Service, StatefulSet,
// Deployment), into PodMonitor (prometheus-operator's CRD, the fields we use)
// or into Kustomization, strictly: an unknown or misspelt field is an error
// naming the file, the document and the field. Set.Check then checks what a
// schema cannot: the required fields, and that the documents agree with
// each other (a selector matches its pod template's labels, serviceName
// names a headless Service, every ConfigMap and Secret a pod refers to
// exists with the keys it names, probe and Service ports name container
// ports, every ${VAR} without a default in a mounted pipeline is set in the
// container's environment, SHARD_COUNT equals replicas, each
// kustomization.yaml lists every manifest of its folder).
//
// PodEnv gives a container's environment as the kubelet would set it, so
// that a test can lint the mounted pipeline with `fluss-iggy lint` as a pod
// would run it (manifest_test.go).
package k8smanifest
