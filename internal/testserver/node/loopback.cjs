// Preloaded with `node --require` so that a Node server that listens on all
// interfaces (server-everything's HTTP modes do) binds to 127.0.0.1 only:
// integration tests must not open a port to the network.
'use strict';
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const a = args[0];
  if (a !== null && typeof a === 'object' && !Array.isArray(a) && (a.port !== undefined || a.host !== undefined)) {
    args[0] = Object.assign({}, a, { host: '127.0.0.1' });
  } else if (typeof a === 'number' || (typeof a === 'string' && /^\d+$/.test(a))) {
    // listen(port[, host][, backlog][, callback])
    if (typeof args[1] === 'string') {
      args[1] = '127.0.0.1';
    } else {
      args.splice(1, 0, '127.0.0.1');
    }
  }
  return listen.apply(this, args);
};
