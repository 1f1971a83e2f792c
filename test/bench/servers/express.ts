// Baseline: a bare Express 5 server answering a small JSON body.
import express from 'express';

const app = express();
app.get(/.*/, (_req, res) => {
  res.json({ status: 'healthy', timestamp: new Date().toISOString() });
});
app.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('ready\n'));
