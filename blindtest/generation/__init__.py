"""Asking models for answers. The half every stage shares (an LLM judge asks through it too):
the client (:mod:`~blindtest.transport.client`, :mod:`~blindtest.transport.batch_client`),
the endpoint, flow control, failures, the retry policy, the wire format and the Batch API's
files and loop. The rest is bt-generate's library, by job (the stage itself is
:mod:`blindtest.generation.generate`)."""
