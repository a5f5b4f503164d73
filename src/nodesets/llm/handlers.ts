/** llm: chat-completions model calls (OpenAI-compatible endpoints) and a model-graded scorer. */
import type { NodesetModule } from '../../core/types.js';
import { chat, evictChat } from './chat.js';
import { evictJudge, judge } from './judge.js';
import { endpointLimiterStats } from './endpoint-limiter.js';
import { warmUpClient } from './warm-up.js';

const llm: NodesetModule = {
  functions: { chat, judge },
  // Before the host says ready, so a run's first round of calls does not pay the client's first-call costs.
  init: async () => {
    await warmUpClient();
  },
  endpoints: endpointLimiterStats,
  evict(episodeKey) {
    evictChat(episodeKey);
    evictJudge(episodeKey);
  },
};

export default llm;
