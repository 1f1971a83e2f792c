import type { Resolved } from '../../core/plugin';
import { automationDeps, automationRef } from './context';

export const deps = { ...automationDeps, automation: automationRef };
export type Deps = Resolved<typeof deps>;
