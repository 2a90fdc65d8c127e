"""What Kubernetes RBAC says about reading ConfigMaps and Secrets: the resources that
mean them, the verbs that read, the ClusterRoles every cluster has, and the user and
group names the API server gives ServiceAccounts. Read by plan/namerefs.py (a Role's
``resourceNames``) and plan/byname.py (who may read an object through the API)."""

from __future__ import annotations

# the kind an RBAC rule's resource means (the core group's REST resources, as
# ``kubectl api-resources`` lists them; k8s.io/api rbac/v1 PolicyRule.Resources)
RBAC_RESOURCES = {"configmaps": "ConfigMap", "secrets": "Secret"}

# the verbs that read an object ("*": rbac/v1 VerbAll; k8s.io/kubernetes
# plugin/pkg/auth/authorizer/rbac/rbac.go RuleAllows, VerbMatches)
READ_VERBS = frozenset(("get", "list", "watch", "*"))

# the ClusterRoles every cluster has (Kubernetes' default RBAC, plugin/pkg/auth/authorizer/
# rbac/bootstrappolicy/policy.go): view reads ConfigMaps (not Secrets), edit and admin
# read both, cluster-admin everything; bound by name, they are not in the input
BUILTIN_CLUSTER_ROLES = {
    "view": ["ConfigMap"],
    "edit": ["ConfigMap", "Secret"],
    "admin": ["ConfigMap", "Secret"],
    "cluster-admin": ["ConfigMap", "Secret"],
}

# a ServiceAccount's user name is system:serviceaccount:NS:NAME, and it is in the groups
# system:serviceaccounts:NS and system:serviceaccounts (k8s.io/apiserver
# pkg/authentication/serviceaccount/util.go ServiceAccountUsernamePrefix,
# ServiceAccountGroupPrefix, AllServiceAccountsGroup)
SERVICE_ACCOUNT_USER_PREFIX = "system:serviceaccount:"
SERVICE_ACCOUNT_GROUP_PREFIX = "system:serviceaccounts:"
ALL_SERVICE_ACCOUNTS_GROUP = "system:serviceaccounts"
