#!/bin/sh
# Fake extractor that prints a valid-looking response but exits non-zero:
# the output of a failed command must not be trusted.
cat >/dev/null
printf '%s\n' '{"facts": [{"category": "decisions", "key": "from a failed run", "text": "A failed extractor run must not produce records.", "confidence": 0.9}]}'
echo "model quota exceeded" >&2
exit 3
