const browsers: Array<[name: string, pattern: RegExp]> = [
  ['Edge', /\bEdg(e|A|iOS)?\//],
  ['Opera', /\bOPR\//],
  ['Firefox', /\b(Firefox|FxiOS)\//],
  ['Chrome', /\b(Chrome|CriOS|HeadlessChrome|Chromium)\//],
  ['Safari', /\bVersion\/[\d.]+.*Safari\//],
];

const systems: Array<[name: string, pattern: RegExp]> = [
  ['Android', /\bAndroid\b/],
  ['iOS', /\b(iPhone|iPad|iPod)\b/],
  ['Windows', /\bWindows\b/],
  ['macOS', /\bMac OS X\b|\bMacintosh\b/],
  ['ChromeOS', /\bCrOS\b/],
  ['Linux', /\bLinux\b/],
];

/** A person's name for a session's device, from its user agent: "Chrome on Linux". */
export function describeDevice(userAgent: string | null | undefined): string {
  if (!userAgent) return 'Unknown device';
  const browser = browsers.find(([, pattern]) => pattern.test(userAgent))?.[0];
  const system = systems.find(([, pattern]) => pattern.test(userAgent))?.[0];
  if (browser && system) return `${browser} on ${system}`;
  return browser ?? system ?? 'Unknown device';
}
