// Chromium (from npm, see browser-binary.ts), driven by playwright-core, kept on this machine:
// other hosts do not resolve, and the tests record every request a page makes so they can show
// that none left loopback.
import { chromium, type Browser, type BrowserContext } from '../../dist-tools/playwright.js';
import { chromiumExecutable } from './browser-binary.js';

// Not the package's own `chromium.args`: they include --disable-web-security, which would switch
// off the CORS checks the client suite relies on.
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // A second fence behind the request checks: no name but loopback resolves.
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
];

/** What a suite gets: contexts of its own, closed with it. */
export interface SuiteBrowser {
  newContext: Browser['newContext'];
  /** Closes the contexts this suite opened. */
  close(): Promise<void>;
}

let shared: Promise<Browser> | undefined;

/**
 * Chromium for one suite. The suites of a test process share one browser (a launch costs a
 * couple of seconds of CPU) and each gets contexts of its own, isolated from the others' as two
 * profiles are; Playwright stops the browser when the process exits. A missing browser is an
 * error, never a skip.
 */
export async function launchChromium(): Promise<SuiteBrowser> {
  shared ??= chromiumExecutable().then((executablePath) =>
    chromium.launch({ executablePath, args: ARGS, timeout: 30_000 }),
  );
  // A failed launch is not kept: the next suite tries again and reports its own failure.
  const browser = await shared.catch((error: unknown) => {
    shared = undefined;
    throw error;
  });
  const contexts: BrowserContext[] = [];
  return {
    newContext: async (options) => {
      const context = await browser.newContext(options);
      contexts.push(context);
      return context;
    },
    close: async () => {
      await Promise.all(contexts.splice(0).map((context) => context.close()));
    },
  };
}

/** True for URLs the tests allow a page to load: 127.0.0.1 and inline data. */
export function isLocal(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  return protocol === 'data:' || protocol === 'blob:' || hostname === '127.0.0.1';
}

/**
 * Aborts every request of the context to another host and returns the list it records them in.
 * `seen` holds every routed URL, so a test can show the guard was in the path at all.
 */
export async function blockOutsideRequests(context: BrowserContext): Promise<{ outside: string[]; seen: string[] }> {
  const outside: string[] = [];
  const seen: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    seen.push(url);
    if (isLocal(url)) return route.continue();
    outside.push(url);
    return route.abort('blockedbyclient');
  });
  return { outside, seen };
}

/** Records Content-Security-Policy violations: a request CSP refuses never reaches the network or a route. */
export async function recordCspViolations(context: BrowserContext): Promise<void> {
  await context.addInitScript({
    content: `window.__cspViolations = [];
      document.addEventListener('securitypolicyviolation', (e) => window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));`,
  });
}
