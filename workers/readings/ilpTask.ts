// Worker task for the QuestDB store: one chunk of a parsed, resolved batch encoded as ILP
// (ilp.ts). The columns come in transferred and the text goes back transferred.
import { transfer } from '../transfer.ts';
import { encodeIlp, type IlpChunk } from '../../src/shared/readings/ilp.ts';

export default function ilpTask(chunk: IlpChunk): Uint8Array {
  const bytes = encodeIlp(chunk);
  return transfer(bytes, [bytes.buffer]);
}
