import auth from '../../../plugins/auth';
import commercial from '../../../plugins/commercial';
import llm from '../../../plugins/llm';
import monetization from '../../../plugins/monetization';
import tenants from '../../../plugins/tenants';
import usage from '../../../plugins/usage';
import workflows from '../../../plugins/workflows';
import incidents from '../../../plugins/incidents';
import kernels from '../../../plugins/kernels';

/** The plugins the billing group's tests load: its own three and those they read. */
export const billingPlugins = [auth, usage, monetization, commercial, tenants, workflows, llm, incidents, kernels];
