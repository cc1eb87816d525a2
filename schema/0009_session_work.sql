-- Whether a session is an agent's work on a task: 1 when any of its
-- messages is a tool's output (a command's result, a file read), 0 for a
-- chat. Ranking treats the two apart (`recall::rank`): a window of code and
-- tool output is not a turn of a chat. It is the session's, so every one
-- of its passages is ranked as work, including the reasoning between the
-- tool calls and a session whose tool output did not match the question.
--
-- Filled here from the stored passages (each passage is one message, and
-- its `roles` is the JSON array of that message's role); `recall index`
-- keeps it from then on.
ALTER TABLE sessions ADD COLUMN work INTEGER NOT NULL DEFAULT 0;

UPDATE sessions SET work = EXISTS (
    SELECT 1 FROM chunks c
    WHERE c.source_id = sessions.source_id AND c.roles LIKE '%"tool"%'
);
