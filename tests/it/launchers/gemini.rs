//! Gemini CLI (`gemini -p`): filled in below.
