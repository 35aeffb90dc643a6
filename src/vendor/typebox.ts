// TypeBox for the whole code base, made one file at build time (scripts/bundle-dist.ts): the package is
// some 680 small ES modules, and loading them took 0.3-0.45 s of every process's start (the library's
// import, each CLI command, `tracelake serve`). Import TypeBox from here, never from the package, so a
// process holds one copy (its Settings are per copy).
export { Type, type Static, type TSchema } from 'typebox';
export { Compile } from 'typebox/compile';
export { Settings } from 'typebox/system';
export { Value } from 'typebox/value';
