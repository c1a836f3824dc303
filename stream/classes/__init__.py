"""Stream's 2023 module paths, ``stream.classes.*``, kept so that scripts written from that
era's documentation run unchanged (docs/compat/stream-users.md)."""
