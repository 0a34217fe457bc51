"""The judging page: ``bt-judge RUN --web``. ``page`` renders what a reviewer sees (Jinja2
templates with autoescape, markdown through markdown-it-py with raw HTML escaped); ``server``
serves it on 127.0.0.1 behind a token per reviewer and is the only module here that opens a
socket. Nothing served depends on the arrangement: the page gets the blinded ``JudgeView``."""
