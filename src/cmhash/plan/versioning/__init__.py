"""Versioned names: a ConfigMap or Secret renamed ``<name>-<suffix>`` after its content,
and every in-stream reference to it rewritten, so a rollback (``kubectl rollout undo``,
the old ReplicaSet during a rollout) finds the old config instead of the new one.

- names.py: the suffix rule (what a versioned name looks like, its base, its suffix);
- decision.py: which objects are renamed to what (the reduce stage's ``decide``);
- edits.py: the edits that rename them and every pod-spec reference to them.

A Secret a source produces is versioned through its source (plan/source_versions.py);
earlier versions are carried from a previous output by plan/history.py.
"""
