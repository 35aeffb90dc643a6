// History API routing: the current Route comes from location; links push a new entry, small state
// changes (the selected span) replace the current one so Back leaves the screen, not the span.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { parseRoute, routeUrl, type Route } from './routes.js';

const CHANGED = 'tracelake:navigate';

/** The tab's title, so history and open tabs name the screen. */
export function useTitle(title: string | null | undefined): void {
  useEffect(() => {
    document.title = title ? `${title} · tracelake` : 'tracelake';
  }, [title]);
}

export function navigate(to: Route | string, options: { replace?: boolean } = {}): void {
  const url = typeof to === 'string' ? to : routeUrl(to);
  if (url === location.pathname + location.search) return;
  if (options.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  window.dispatchEvent(new Event(CHANGED));
}

export function currentRoute(): Route {
  return parseRoute(location.pathname, location.search);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const update = () => setRoute(currentRoute());
    window.addEventListener('popstate', update);
    window.addEventListener(CHANGED, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(CHANGED, update);
    };
  }, []);
  return route;
}

interface AnchorProps {
  to: Route | string;
  replace?: boolean;
  class?: string;
  title?: string;
  'aria-current'?: 'page' | undefined;
  children?: ComponentChildren;
}

/** An <a> that navigates in place on a plain click and behaves as a link otherwise (new tab, copy). */
export function Link({ to, replace, children, ...rest }: AnchorProps) {
  const href = typeof to === 'string' ? to : routeUrl(to);
  const onClick = (e: MouseEvent) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    e.stopPropagation();
    navigate(href, replace ? { replace } : {});
  };
  return (
    <a {...rest} href={href} onClick={onClick}>
      {children}
    </a>
  );
}
