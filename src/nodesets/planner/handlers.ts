/** planner: gridnav agents served batched, row by row (each output depends only on its own row). */
import type { NodeCallArgs, NodeOutputs, NodesetModule } from '../../core/types.js';
import { plannerAct, randomAct } from './agents.js';

const act = ({ inputs, config, ctx }: NodeCallArgs): NodeOutputs => ({ action: plannerAct(inputs.observation, config, ctx) });
const random = ({ inputs, config, ctx }: NodeCallArgs): NodeOutputs => ({ action: randomAct(inputs.observation, config, ctx) });

const planner: NodesetModule = {
  functions: { act, random },
  batched: {
    act: (rows) => rows.map(act),
    random: (rows) => rows.map(random),
  },
};

export default planner;
