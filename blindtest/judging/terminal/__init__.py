"""The terminal the session judges in: ``layout`` (pure text layout), ``questions`` (keys and
wording per protocol, pure), ``console`` (tty I/O, readline, signals, resize) and ``pager``
(a trial taller than the screen, page by page)."""
