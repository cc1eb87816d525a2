#!/bin/sh
# Fake extractor that chats instead of printing a facts response.
cat >/dev/null
echo "Sure! Here are the facts I found in this session:"
echo "- Use pnpm, not npm."
