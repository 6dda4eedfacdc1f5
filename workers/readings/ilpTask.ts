// Worker task for the QuestDB store: one chunk of a parsed, resolved batch encoded as ILP
// (ilp.ts). The columns come in transferred; the text is written into the shared buffer the
// store lends (`into`, used again chunk after chunk), or into a new one that goes back transferred.
import { transfer } from '../transfer.ts';
import { encodeIlp, type IlpChunk } from '../../src/shared/readings/ilp.ts';

export default function ilpTask({ chunk, into }: { chunk: IlpChunk; into?: Uint8Array }): Uint8Array {
  const bytes = encodeIlp(chunk, into);
  return bytes.buffer instanceof ArrayBuffer ? transfer(bytes, [bytes.buffer]) : bytes;
}
