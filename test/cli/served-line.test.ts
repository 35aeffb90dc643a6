// Whoever starts `tracelake serve` learns its address from the line it prints once listening: the
// reading must give back the address printed, for any data folder, and nothing before the line ends.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { servedLine, servedUrl } from '../../src/cli/served-line.js';

test('the served line gives back its address, whatever the folder; nothing until the line ends', () => {
  for (const dir of ['/data/tracelake', '/tmp/with space/x', '/srv/seen at night']) {
    const line = servedLine('1.2.3', dir, 'http://127.0.0.1:40123');
    assert.equal(servedUrl(line), 'http://127.0.0.1:40123', dir);
    assert.equal(servedUrl(`warming up\n${line}Viewer: open http://127.0.0.1:40123/ui/\n`), 'http://127.0.0.1:40123');
    // A chunk may end inside the address: a port cut short must not be taken.
    assert.equal(servedUrl(line.slice(0, -3)), null);
  }
  assert.equal(servedUrl(''), null);
});
