// The web dashboard: a static single-page app served by the API's own express app. GET / is the page;
// /static/ its ES modules and CSS (web/static, hand-written, no build step); /vendor/uplot/
// uPlot's dist files from node_modules, so nothing is fetched from a CDN. The page reads the same /v1 API
// a script would. Static files need no token: they hold no data, and the API calls they make do.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type Response, type Router } from 'express';

const STATIC_DIR = fileURLToPath(new URL('./static/', import.meta.url));
const UPLOT_DIST = join(dirname(createRequire(import.meta.url).resolve('uplot/package.json')), 'dist');

/**
 * Scripts, styles and connections from this origin only. Inline styles stay allowed because uPlot sizes
 * its elements through style attributes; nothing the page shows is inserted as HTML (it uses textContent).
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'none'",
].join('; ');

function securityHeaders(res: Response): void {
  res.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  res.set('X-Content-Type-Options', 'nosniff');
  res.set('Referrer-Policy', 'no-referrer');
}

export function webRouter(): Router {
  const router = express.Router();
  const files = { index: false, redirect: false, fallthrough: true, setHeaders: securityHeaders } as const;
  router.get(['/', '/index.html'], (_req, res) => {
    securityHeaders(res);
    // Revalidated each load, so a new version of the page is picked up at once.
    res.set('Cache-Control', 'no-cache').sendFile(join(STATIC_DIR, 'index.html'));
  });
  router.use('/static', express.static(STATIC_DIR, { ...files, cacheControl: true, maxAge: 0 }));
  router.use('/vendor/uplot', express.static(UPLOT_DIST, { ...files, maxAge: '1d' }));
  return router;
}
