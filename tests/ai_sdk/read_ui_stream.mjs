// Reads UI message streams (SSE, as laminate's "ai-sdk" target writes them) with the `ai`
// package's own parser, chunk schema and message reader, and prints each final message as
// one JSON line: `node read_ui_stream.mjs FILE...`. A chunk that fails the schema, or a
// stream the reader rejects, ends the script with an error (exit status 1).
import { readFile } from "node:fs/promises";
import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema } from "ai";

async function finalMessage(bytes) {
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
      throw error;
    },
  });
  for await (const message of messages) last = message;
  return last;
}

for (const path of process.argv.slice(2)) {
  process.stdout.write(JSON.stringify(await finalMessage(await readFile(path))) + "\n");
}
