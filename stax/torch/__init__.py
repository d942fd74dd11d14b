"""PyTorch models compiled by Stax: `torch.compile(model, backend="stax")`.

`backend` is registered under the `torch_dynamo_backends` entry point, so the name "stax"
works without importing this package; `explain(model, *inputs)` shows what Stax did with
each graph it received.
"""

from stax.torch.dynamo import backend
from stax.torch.explain import explain

__all__ = ["backend", "explain"]
