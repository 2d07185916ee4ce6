import { z } from 'zod';
import { NOT_SHARED, ZAllowed, type TAllowed } from './allowed';
import { ZDesktopImage } from './desktops';
import { ZDomainDescription, ZDomainName } from './domains';

/**
 * Templates (spec 001 §3 "Template", reference §2.7 and §4.3): made from a stopped desktop,
 * duplicated (same disk), shared, enabled or disabled, deleted with what depends on them,
 * or turned back into a desktop.
 */

/** Sharing: the shared `allowed` criteria (missing keys are unused). */
export const ZTemplateAllowed = ZAllowed;
export type TTemplateAllowed = TAllowed;
export const TEMPLATE_NOT_SHARED: TTemplateAllowed = NOT_SHARED;

/** Statuses of a template: being made (a job runs), ready, or the job failed. */
export const TEMPLATE_STATUSES = ['Creating', 'Stopped', 'Failed'] as const;

/** A template as GET /user/templates and the template_* events carry it. */
export const ZTemplate = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  icon: z.string(),
  image: ZDesktopImage,
  category: z.string(),
  category_name: z.string().nullable(),
  group: z.string(),
  group_name: z.string().nullable(),
  user: z.string(),
  user_name: z.string().nullable(),
  /** bytes the template's disk takes (actual size) */
  size: z.number(),
  editable: z.boolean(),
  allowed: ZTemplateAllowed,
  enabled: z.boolean(),
  status: z.string(),
  /** percent while the creation job runs, null otherwise */
  progress: z.number().nullable(),
  /** desktops and templates built on it, directly */
  derivatives: z.number(),
  /** the template whose disk this one shares, when it is a duplicate */
  duplicate_of: z.string().nullable(),
  vcpus: z.number(),
  memory: z.number(),
  created: z.number(),
});
export type TTemplate = z.infer<typeof ZTemplate>;

export const TEMPLATE_NAME_MAX = 50;

/** POST /template/ */
export const ZNewTemplate = z.object({
  desktop_id: z.string().min(1).max(64),
  name: ZDomainName,
  description: ZDomainDescription.default(''),
  enabled: z.boolean().default(false),
  allowed: ZAllowed.prefault({}),
});
export type TNewTemplate = z.input<typeof ZNewTemplate>;

/** POST /template/duplicate/{id} */
export const ZDuplicateTemplate = ZNewTemplate.omit({ desktop_id: true });
export type TDuplicateTemplate = z.input<typeof ZDuplicateTemplate>;

/** PUT /template/update */
export const ZTemplateUpdate = z.object({
  id: z.string().min(1).max(64),
  enabled: z.boolean().optional(),
  allowed: ZAllowed.optional(),
  name: ZDomainName.optional(),
  description: ZDomainDescription.optional(),
});
export type TTemplateUpdate = z.input<typeof ZTemplateUpdate>;

/** POST /template/to/desktop */
export const ZTemplateToDesktop = z.object({ template_id: z.string().min(1).max(64), name: ZDomainName });

/** One desktop or template of a template's tree of derivatives. */
export type TTemplateTreeNode = {
  id: string;
  name: string;
  kind: 'desktop' | 'template';
  status: string;
  user: string;
  user_name: string | null;
  /** a duplicate (shares the parent's disk) */
  duplicate: boolean;
  /** the caller may not delete it (someone else's) */
  pending: boolean;
  children: TTemplateTreeNode[];
};
export const ZTemplateTreeNode: z.ZodType<TTemplateTreeNode> = z.lazy(() =>
  z.object({
    id: z.string(),
    name: z.string(),
    kind: z.enum(['desktop', 'template']),
    status: z.string(),
    user: z.string(),
    user_name: z.string().nullable(),
    duplicate: z.boolean(),
    pending: z.boolean(),
    children: z.array(ZTemplateTreeNode),
  }),
);

/** GET /template/tree/{id} */
export const ZTemplateTree = z.object({
  id: z.string(),
  name: z.string(),
  /** this template shares its disk with another (it is a duplicate, or has duplicates) */
  is_duplicated: z.boolean(),
  tree: ZTemplateTreeNode,
  /** derivatives the caller does not own: deleting is refused while there are any */
  pending: z.array(z.object({ id: z.string(), name: z.string(), kind: z.enum(['desktop', 'template']), user_name: z.string().nullable() })),
  desktops: z.number(),
  templates: z.number(),
});
export type TTemplateTree = z.infer<typeof ZTemplateTree>;

/** POST /allowed/table/{groups|users}: a search (at least 2 letters) or the names of known ids. */
export const ALLOWED_SEARCH_MIN = 2;
export const ZAllowedTable = z.enum(['groups', 'users']);
export const ZAllowedTableQuery = z.union([
  z.object({ term: z.string().trim().min(ALLOWED_SEARCH_MIN).max(50) }),
  z.object({ ids: z.array(z.string().max(64)).max(1000) }),
]);
export const ZAllowedTableItem = z.object({ id: z.string(), name: z.string(), detail: z.string().nullable() });
export type TAllowedTableItem = z.infer<typeof ZAllowedTableItem>;
