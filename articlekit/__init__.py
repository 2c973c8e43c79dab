"""Publishing machinery: merge experiment artifacts, bind them into the
article's prose, check its claims, render it, and audit it."""
