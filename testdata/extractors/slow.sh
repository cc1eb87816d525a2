#!/bin/sh
# Fake extractor that answers too late: sleeps 3 s, then prints a valid fact.
# Run with `--timeout 1`: if the timeout were not enforced, a record would
# appear.
cat >/dev/null
sleep 3
printf '%s\n' '{"facts": [{"category": "decisions", "key": "too late", "text": "This fact arrived after the timeout and must not be stored.", "confidence": 0.9}]}'
