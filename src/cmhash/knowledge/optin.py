"""Workload kinds cmhash leaves alone unless a setting opts in, and what it tells the
user about one that uses in-stream configuration: one row per gated policy
(kinds.Policy), read by the plan stage (plan/workload.py).

``option`` names the plan option that opts in (a field of plan/options.py
``PlanOptions``, set by ``--jobs`` or ``--pods``); ``skip`` names the reason the
workload is left alone (a member of analyze/summaries.py ``SkipReason``).
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

from typing import NamedTuple

from cmhash.findings import Code
from cmhash.knowledge.kinds import Policy


class OptIn(NamedTuple):
    """A kind left alone unless a setting opts in, and what to tell the user."""

    option: str  # the PlanOptions field that opts in
    skip: str  # the SkipReason's name
    code: Code
    message: str
    hook_message: str | None = None  # for a Helm or Argo CD hook, which its tool re-creates


OPT_IN: dict[Policy, OptIn] = {
    # a Job's spec.template is immutable: kubernetes/kubernetes pkg/apis/batch/validation/
    # validation.go ValidateJobSpecUpdate (ValidateImmutableField on spec.template); a hook
    # is deleted and created again by its tool: https://helm.sh/docs/topics/charts_hooks/
    # #hook-deletion-policies, argoproj/gitops-engine pkg/sync/hook/delete_policy.go (no
    # policy: BeforeHookCreation)
    Policy.JOB: OptIn(
        "jobs",
        "JOB",
        Code.JOB_NOT_ANNOTATED,
        "uses in-stream config but is not annotated: a Job's pod template is "
        "immutable and kubectl apply would fail (--jobs to opt in)",
        "uses in-stream config but is not annotated: a Helm or Argo CD hook is deleted and "
        "created again by its tool, and reads the configuration it finds then (--jobs to "
        "annotate it anyway)",
    ),
    # a Pod's metadata may change, and the kubelet restarts a container only when its spec
    # changes: kubernetes/kubernetes pkg/apis/core/validation/validation.go ValidatePodUpdate,
    # pkg/kubelet/kuberuntime/kuberuntime_manager.go computePodActions
    Policy.POD: OptIn(
        "pods",
        "POD",
        Code.POD_NOT_ANNOTATED,
        "uses in-stream config; a bare Pod is not annotated because an annotation "
        "does not restart it (--pods to opt in)",
    ),
}
