"""What the API server allows of a Job, for ``--jobs=rename`` (analyze/jobs.py): the
spec fields that may change on an existing Job, and how long its name may be."""

from __future__ import annotations

# Job spec fields the API server lets change on an existing Job (k8s.io/kubernetes
# pkg/apis/batch/validation/validation.go ValidateJobSpecUpdate): a change to them is
# applied to the Job, it is no reason to run it again
MUTABLE = ("parallelism", "suspend", "activeDeadlineSeconds", "ttlSecondsAfterFinished")

# the Job controller puts the Job's name in its pods' job-name label, whose values are
# limited to 63 characters (k8s.io/apimachinery pkg/util/validation IsValidLabelValue,
# LabelValueMaxLength)
MAX_NAME = 63
