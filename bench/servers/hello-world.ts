import Fastify from 'fastify';

// The baseline of issue 4: fastify's hello world, no logger, no plugins, on a free loopback
// port. The bench compares every platform target with this process's throughput.
const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));

const address = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`hello-world listening on ${address}`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void app.close().then(() => process.exit(0)));
}
