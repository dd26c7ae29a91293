// Reads UI message streams (SSE, as laminate's "ai-sdk" target writes them) with the `ai`
// package's own parser, chunk schema and message reader, and prints each final message as
// one JSON line: `node read_ui_stream.mjs FILE...`. A chunk that fails the schema, or a
// stream the reader rejects, ends the script with an error (exit status 1). With
// `--errors` first, a stream's error chunk is reported instead: each line is then
// `{"error": <errorText or null>, "message": <the final message>}`.
import { readFile } from "node:fs/promises";
import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema } from "ai";

const reportErrors = process.argv[2] === "--errors";
const paths = process.argv.slice(reportErrors ? 3 : 2);

async function finalMessage(bytes, errors) {
  const input = new ReadableStream({
    start(controller) {
      controller.enqueue(new Uint8Array(bytes));
      controller.close();
    },
  });
  const parsed = parseJsonEventStream({ stream: input, schema: uiMessageChunkSchema });
  const chunks = parsed.pipeThrough(
    new TransformStream({
      transform(result, controller) {
        if (!result.success) throw result.error;
        controller.enqueue(result.value);
      },
    }),
  );

  let last = null;
  const messages = readUIMessageStream({
    stream: chunks,
    onError: (error) => {
      if (!reportErrors) throw error;
      errors.push(error.message);
    },
  });
  for await (const message of messages) last = message;
  return last;
}

for (const path of paths) {
  const errors = [];
  const message = await finalMessage(await readFile(path), errors);
  const line = reportErrors ? { error: errors[0] ?? null, message } : message;
  process.stdout.write(JSON.stringify(line) + "\n");
}
