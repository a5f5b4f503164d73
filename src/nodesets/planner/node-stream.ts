/** A stable 32-bit id of a node, so each node of a graph draws its own random stream (FNV-1a over UTF-16 units). */
export function nodeStreamId(nodeId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < nodeId.length; i++) {
    h ^= nodeId.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
