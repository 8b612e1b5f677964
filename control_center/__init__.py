"""Control Center: a desktop control room for AI coding agents.

Layers, one direction: ``core`` (pure domain) <- ``store`` <- ``workspace`` <- ``harness``
<- ``pipeline`` <- ``mcp_server`` <- ``ui`` <- ``app`` <- ``cli``.
"""

__version__ = "0.1.0"
