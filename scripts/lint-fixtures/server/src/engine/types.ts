export type Disk = { path: string };
