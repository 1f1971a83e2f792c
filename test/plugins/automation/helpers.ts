import { eventually } from '../../helpers/eventually';
import type { TestHost } from '../../helpers/host';

/** The deployment once it is in one of `states` (read as `token`'s user). */
export const settleDeployment = (h: TestHost, token: string, id: string, states: string[]) =>
  eventually(async () => {
    const r = await h.request('GET', `/automation/deployments/${id}`, { token });
    return states.includes(r.body.state) ? r.body : null;
  }, 30_000);
