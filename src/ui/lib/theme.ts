// Light and dark themes: the system's choice unless the user picked one (kept in localStorage; a
// preference of the browser, not state of a screen).

export type ThemeChoice = 'system' | 'light' | 'dark';
const KEY = 'tracelake.theme';
const media = () => window.matchMedia('(prefers-color-scheme: dark)');

export function themeChoice(): ThemeChoice {
  const v = localStorage.getItem(KEY);
  return v === 'light' || v === 'dark' ? v : 'system';
}

export function applyTheme(choice: ThemeChoice = themeChoice()): void {
  const dark = choice === 'dark' || (choice === 'system' && media().matches);
  document.documentElement.dataset['theme'] = dark ? 'dark' : 'light';
}

export function setTheme(choice: ThemeChoice): void {
  if (choice === 'system') localStorage.removeItem(KEY);
  else localStorage.setItem(KEY, choice);
  applyTheme(choice);
}

export function followSystemTheme(): void {
  media().addEventListener('change', () => applyTheme());
}
