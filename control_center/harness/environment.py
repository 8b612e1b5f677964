"""The environment handed to every process the harness starts (tools, gates, the Claude Code CLI).

Credential-like variables stay with the operator: an agent that can run `printenv` would otherwise
copy an API key into the transcript and the model's context. A name is kept only when the operator
allowed it by name in Settings (``AppSettings.allowed_env``), or when a caller passes it on purpose
(the Claude Code transport gives its process exactly the one key it needs, via ``extra``)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

#: Parts of a variable name that mark it as a credential (matched case-insensitively anywhere in
#: the name: ``ANTHROPIC_API_KEY``, ``GH_TOKEN``, ``DB_PASSWORD``, ``AWS_SECRET_ACCESS_KEY``, ...).
_CREDENTIAL_PARTS = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|PRIVATE", re.I)

#: Variables that point at credential files or agents without a telling word in their name.
CREDENTIAL_FILE_VARIABLES = frozenset(
    {
        "AWS_SHARED_CREDENTIALS_FILE",
        "AWS_CONFIG_FILE",
        "AWS_PROFILE",
        "AWS_DEFAULT_PROFILE",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AZURE_AUTH_LOCATION",
        "AZURE_CLIENT_CERTIFICATE_PATH",
        "AZURE_CONFIG_DIR",
        "CLOUDSDK_CONFIG",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_GHA_CREDS_PATH",
        "KUBECONFIG",
        "DOCKER_CONFIG",
        "DOCKER_AUTH_CONFIG",
        "NETRC",
        "PGPASSFILE",
        "SSH_AUTH_SOCK",
        "GNUPGHOME",
        "GIT_ASKPASS",
        "SSH_ASKPASS",
        "VAULT_ADDR",
        "OP_SESSION",
    }
)


def is_credential_name(name: str) -> bool:
    """True for a variable name that looks like it carries a credential."""
    upper = name.upper()
    return bool(_CREDENTIAL_PARTS.search(upper)) or upper in CREDENTIAL_FILE_VARIABLES


def scrubbed_environ(
    base: Mapping[str, str] | None = None,
    *,
    allow: Iterable[str] = (),
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """``base`` (default: this process's environment) without credential-like variables.

    ``allow`` names variables the operator chose to pass through (exact names, case-sensitive like
    the environment itself). ``extra`` is added last, unfiltered: a caller's deliberate choice."""
    source = os.environ if base is None else base
    allowed = frozenset(allow)
    env = {k: v for k, v in source.items() if k in allowed or not is_credential_name(k)}
    if extra:
        env.update(extra)
    return env


def withheld_names(base: Mapping[str, str] | None = None, *, allow: Iterable[str] = ()) -> list[str]:
    """The variable names ``scrubbed_environ`` would drop (for Settings and diagnostics)."""
    source = os.environ if base is None else base
    allowed = frozenset(allow)
    return sorted(k for k in source if k not in allowed and is_credential_name(k))
