// The process's instruments for monitoring (Prometheus's text format at GET /metrics, modules/metrics):
// what this process counts as it works (HTTP answers, desktop starts it ran), beside the installation's
// numbers read from the database when scraped. One registry per server (tests run several in a process).
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

export type StartOutcome = 'started' | 'failed';

export function createMetrics(labels: { server: string }) {
  const registry = new Registry();
  // Each series names the process it comes from (several processes behind one balancer).
  registry.setDefaultLabels(labels);
  collectDefaultMetrics({ register: registry, prefix: 'vdi_process_' });
  const http = new Histogram({
    name: 'vdi_http_request_duration_seconds',
    help: 'HTTP requests answered by this process, by route pattern (never the path itself), method and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const starts = new Histogram({
    name: 'vdi_desktop_start_duration_seconds',
    help: 'Desktop starts run by this process, from leaving the start queue to the machine running (or failing), by hypervisor and outcome',
    labelNames: ['hypervisor', 'outcome'] as const,
    buckets: [0.5, 1, 2, 5, 10, 20, 30, 60, 120],
    registers: [registry],
  });
  const viewers = new Counter({
    name: 'vdi_viewer_connections_opened_total',
    help: 'Viewer connections opened through this process (browser VNC and RDP, SPICE tunnels, RDP relays), by protocol',
    labelNames: ['protocol'] as const,
    registers: [registry],
  });
  return {
    registry,
    /** One HTTP answer: `route` is the matched pattern ("unmatched" for none), `seconds` its time. */
    http(method: string, route: string, status: number, seconds: number) {
      http.observe({ method, route, status: String(status) }, seconds);
    },
    /** One start this process ran on `hypervisor`, and how long its machine took. */
    start(hypervisor: string, outcome: StartOutcome, seconds: number) {
      starts.observe({ hypervisor, outcome }, seconds);
    },
    /** A viewer connection opened here. */
    viewer(protocol: string) {
      viewers.inc({ protocol });
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
