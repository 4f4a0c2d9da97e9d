/**
 * Collects a command's output keeping at most `headBytes` from its start and `tailBytes` from
 * its end, however much there is. `text()` is all of it when nothing was dropped; otherwise the
 * head and tail cut at line boundaries, with a note in between saying how much was left out.
 */
export function outputBuffer(
  headBytes: number,
  tailBytes: number,
): { push: (chunk: Buffer) => void; text: () => string } {
  const head: Buffer[] = [];
  let headSize = 0;
  const tail: Buffer[] = [];
  let tailSize = 0;
  let total = 0;
  let lines = 0;
  return {
    push: (chunk) => {
      total += chunk.length;
      for (const byte of chunk) if (byte === 10) lines++;
      if (headSize < headBytes) {
        const taken = chunk.subarray(0, headBytes - headSize);
        head.push(taken);
        headSize += taken.length;
        chunk = chunk.subarray(taken.length);
      }
      if (chunk.length === 0) return;
      tail.push(chunk);
      tailSize += chunk.length;
      while (tail.length > 1 && tailSize - tail[0]!.length >= tailBytes) tailSize -= tail.shift()!.length;
    },
    text: () => {
      const start = Buffer.concat(head);
      let end = Buffer.concat(tail);
      if (end.length > tailBytes) end = end.subarray(end.length - tailBytes);
      if (total === start.length + end.length) return Buffer.concat([start, end]).toString("utf8");
      // Whole lines on both sides of the cut (this also keeps multi-byte characters whole);
      // output without line breaks is cut between characters, and the note still gets its own line.
      const headCut = start.lastIndexOf(10);
      const shownHead = headCut === -1 ? start.subarray(0, completeEnd(start)) : start.subarray(0, headCut + 1);
      const tailCut = end.indexOf(10);
      const shownTail =
        tailCut === -1 ? end.subarray(firstStart(end)) : tailCut === end.length - 1 ? end : end.subarray(tailCut + 1);
      const omitted = total - shownHead.length - shownTail.length;
      const omittedLines = lines - count(shownHead) - count(shownTail);
      const note = `[… ${omitted} bytes (${omittedLines} lines) of output cut here; ${total} bytes in all. Redirect to a file and read or grep it to see more …]`;
      const beforeNote = shownHead.length === 0 || headCut !== -1 ? "" : "\n";
      return `${shownHead.toString("utf8")}${beforeNote}${note}\n${shownTail.toString("utf8")}`;
    },
  };
}

// Where the last complete UTF-8 character of `bytes` ends: an incomplete one at the end is left out.
function completeEnd(bytes: Buffer): number {
  let lead = bytes.length - 1;
  while (lead > 0 && (bytes[lead]! & 0xc0) === 0x80) lead--;
  if (lead < 0) return 0;
  const byte = bytes[lead]!;
  const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
  return bytes.length - lead < length ? lead : bytes.length;
}

// Where the first UTF-8 character of `bytes` starts: continuation bytes of a cut one are skipped.
function firstStart(bytes: Buffer): number {
  let start = 0;
  while (start < bytes.length && (bytes[start]! & 0xc0) === 0x80) start++;
  return start;
}

function count(bytes: Buffer): number {
  let newlines = 0;
  for (const byte of bytes) if (byte === 10) newlines++;
  return newlines;
}
