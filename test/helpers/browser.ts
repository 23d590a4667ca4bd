// Browser-test helpers: Debian's Chromium (installed by infra/browser.ts when missing, never a downloaded
// build) driven by playwright-core; pages that record every console error and uncaught exception; and
// screenshots under test-artifacts/ (or docs/images/, for those the documentation shows).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { ensureChromium } from '../../infra/browser.js';

export const ARTIFACTS_DIR = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

export async function launchChromium(): Promise<Browser> {
  const executablePath = await ensureChromium((line) => console.log(line));
  return chromium.launch({ executablePath, args: ['--no-sandbox'] });
}

export interface WatchedPage {
  readonly page: Page;
  readonly context: BrowserContext;
  /** Console errors and uncaught exceptions, in order. */
  readonly errors: string[];
}

/** A fresh context and page whose console errors and page errors are collected. */
export async function openWatchedPage(browser: Browser, viewport = { width: 1360, height: 900 }): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console error: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
  return { page, context, errors };
}

/**
 * Where a screenshot the documentation shows goes: docs/images/ when TRAJFLOW_UPDATE_DOCS_IMAGES=1 (to refresh the
 * docs on purpose), test-artifacts/ otherwise, so a test run leaves the working tree as it found it.
 */
export const DOCS_IMAGES_DIR = process.env.TRAJFLOW_UPDATE_DOCS_IMAGES === '1' ? fileURLToPath(new URL('../../docs/images/', import.meta.url)) : ARTIFACTS_DIR;

/** A full-page screenshot at <dir>/<name>.png (test-artifacts/ unless said); returns its path. */
export async function screenshot(page: Page, name: string, dir = ARTIFACTS_DIR): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
