// The console's shell: sign-in, the navigation and a router over the URL fragment
// (#/mesh, #/nodes/<id>, ...). Each page renders into <main> and returns its cleanup.
import { ApiError, login, logout, session, stream } from './api';
import { fill, h, say } from './dom';
import { chaosPage } from './pages/chaos';
import { incidentPage, incidentsPage } from './pages/incidents';
import { meshPage } from './pages/mesh';
import { nodePage } from './pages/node';
import { sloPage } from './pages/slo';
import { telemetryPage, tracePage } from './pages/telemetry';
import { workflowsPage } from './pages/workflows';

export type Page = (main: HTMLElement, arg: string) => (() => void) | void;

const PAGES: Array<{ path: string; label: string; page: Page; nav: boolean }> = [
  { path: 'mesh', label: 'Mesh', page: meshPage, nav: true },
  { path: 'nodes', label: 'Node', page: nodePage, nav: false },
  { path: 'incidents', label: 'Incidents', page: incidentsPage, nav: true },
  { path: 'incident', label: 'Incident', page: incidentPage, nav: false },
  { path: 'slo', label: 'SLOs', page: sloPage, nav: true },
  { path: 'workflows', label: 'Workflows', page: workflowsPage, nav: true },
  { path: 'chaos', label: 'Chaos', page: chaosPage, nav: true },
  { path: 'telemetry', label: 'Telemetry', page: telemetryPage, nav: true },
  { path: 'traces', label: 'Trace', page: tracePage, nav: false },
];

let cleanup: (() => void) | void;

function header(): void {
  const top = document.getElementById('top')!;
  const user = session.user;
  if (!user) return fill(top, h('h1', {}, 'Platform control'));
  const current = location.hash.slice(2).split('/')[0] || 'mesh';
  const live = h('span', { class: stream.live ? 'live on' : 'live', id: 'live' }, stream.live ? 'live' : 'offline');
  fill(
    top,
    h('h1', {}, 'Platform control'),
    h('nav', { 'aria-label': 'Pages' }, h('ul', {}, PAGES.filter((p) => p.nav).map((p) => h('li', {}, h('a', { href: `#/${p.path}`, 'aria-current': p.path === current ? 'page' : null }, p.label))))),
    h('div', { class: 'who' }, live, h('span', {}, `${user.email} (${user.role})`), h('button', { type: 'button', onclick: () => void signOut() }, 'Sign out')),
  );
}

async function signOut(): Promise<void> {
  await logout();
  location.hash = '#/login';
  route();
}

function loginPage(main: HTMLElement): void {
  const email = h('input', { id: 'email', name: 'email', type: 'email', autocomplete: 'username', required: true });
  const password = h('input', { id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const error = h('p', { class: 'error', role: 'alert' });
  const form = h(
    'form',
    { class: 'login', 'aria-labelledby': 'login-title' },
    h('h2', { id: 'login-title' }, 'Sign in'),
    h('div', { class: 'field' }, h('label', { for: 'email' }, 'Email'), email),
    h('div', { class: 'field' }, h('label', { for: 'password' }, 'Password'), password),
    error,
    h('button', { type: 'submit' }, 'Sign in'),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    error.textContent = '';
    login(email.value, password.value).then(
      () => {
        stream.open();
        const wanted = sessionTarget ?? '#/mesh';
        sessionTarget = null;
        if (location.hash === wanted) route();
        else location.hash = wanted;
      },
      (err: unknown) => (error.textContent = err instanceof ApiError ? err.message : 'The service could not be reached'),
    );
  });
  fill(main, form);
  email.focus();
}

/** The page asked for before signing in, opened after it. */
let sessionTarget: string | null = null;

function route(): void {
  if (cleanup) cleanup();
  cleanup = undefined;
  const main = document.getElementById('main')!;
  say('');
  if (!session.user) {
    if (location.hash && location.hash !== '#/login') sessionTarget = location.hash;
    header();
    loginPage(main);
    return;
  }
  const [path, ...rest] = location.hash.slice(2).split('/');
  const page = PAGES.find((p) => p.path === path) ?? PAGES[0];
  header();
  document.title = `${page.label} · Platform control`;
  fill(main);
  cleanup = page.page(main, decodeURIComponent(rest.join('/')));
  main.focus({ preventScroll: true });
}

session.onExpired(() => {
  stream.close();
  say('Your session ended: sign in again', 'error');
  route();
});
stream.onStatus((live) => {
  const el = document.getElementById('live');
  if (!el) return;
  el.textContent = live ? 'live' : 'offline';
  el.className = live ? 'live on' : 'live';
});
window.addEventListener('hashchange', route);
route();
