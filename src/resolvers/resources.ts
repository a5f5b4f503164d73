/**
 * Machine resources as admission sees them: `resources`.
 */
import type { GpuMemory } from '../scheduler/admission/nvidia-smi.js';
import type { ResourceSnapshot } from '../scheduler/types.js';
import { builder } from './builder.js';

const GpuRef = builder.objectRef<GpuMemory>('Gpu').implement({
  description: 'One NVIDIA GPU as last measured.',
  fields: (t) => ({
    index: t.exposeInt('index', { description: "nvidia-smi's index of the GPU." }),
    uuid: t.exposeString('uuid', { description: 'Its UUID (empty where only systeminformation could read it).' }),
    name: t.exposeString('name', { description: 'Its model name.' }),
    totalMb: t.exposeFloat('totalMb', { description: 'Total memory, MB.' }),
    usedMb: t.exposeFloat('usedMb', { description: 'Memory in use, by any process, MB.' }),
    freeMb: t.exposeFloat('freeMb', { description: 'Free memory, MB.' }),
  }),
});

const ResourcesRef = builder.objectRef<ResourceSnapshot>('Resources').implement({
  description: 'Free memory, the reservations of running jobs, and who holds the interactive lock.',
  fields: (t) => ({
    ramTotalMb: t.exposeFloat('ramTotalMb', { description: 'Total RAM, MB.' }),
    ramFreeMb: t.exposeFloat('ramFreeMb', { description: 'Available RAM as measured, MB.' }),
    vramTotalMb: t.exposeFloat('vramTotalMb', {
      nullable: true,
      description: 'Total GPU memory, MB (null when no GPU could be measured).',
    }),
    vramFreeMb: t.exposeFloat('vramFreeMb', { nullable: true, description: 'Free GPU memory, MB (null when no GPU could be measured).' }),
    reservedRamMb: t.exposeFloat('reservedRamMb', { description: 'RAM reserved by running jobs, MB.' }),
    reservedVramMb: t.exposeFloat('reservedVramMb', { description: 'GPU memory reserved by running jobs, MB.' }),
    ramMeasured: t.exposeBoolean('ramMeasured', { description: 'False when RAM comes from the static ledger.' }),
    vramMeasured: t.exposeBoolean('vramMeasured', { description: 'False when GPU memory comes from the static ledger.' }),
    gpus: t.field({
      type: [GpuRef],
      description: 'Each GPU measured (read from nvidia-smi); vramTotalMb and vramFreeMb are their sums. Empty where none was.',
      resolve: (r) => r.gpus,
    }),
    interactiveLockHolder: t.exposeString('interactiveLockHolder', {
      nullable: true,
      description: 'Who holds the interactive lock (a live Play session); admission waits while it is held.',
    }),
    sampledAt: t.field({ type: 'DateTime', description: 'When these figures were measured.', resolve: (r) => r.sampledAt }),
  }),
});

builder.queryFields((t) => ({
  resources: t.field({
    type: ResourcesRef,
    description: 'RAM and VRAM free and reserved, as admission sees them.',
    resolve: (_root, _args, ctx) => ctx.scheduler.resources(),
  }),
}));
