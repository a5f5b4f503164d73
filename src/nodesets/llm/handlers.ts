/** llm: chat-completions model calls (OpenAI-compatible endpoints) and a model-graded scorer. */
import type { NodesetModule } from '../../core/types.js';
import { chat, evictChat } from './chat.js';
import { evictJudge, judge } from './judge.js';

const llm: NodesetModule = {
  functions: { chat, judge },
  evict(episodeKey) {
    evictChat(episodeKey);
    evictJudge(episodeKey);
  },
};

export default llm;
