package kube

import corev1 "k8s.io/api/core/v1"

// PodReady reports the pod's Ready condition (a pod not running is not ready).
func PodReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
