import { keepPreviousData } from '@tanstack/react-query';
import {
  ZAdminCard,
  ZAdminCardList,
  ZBookingRule,
  ZBookingRuleList,
  ZShutdownPolicy,
  ZShutdownPolicyList,
  type TAdminCardCreate,
  type TAdminCardUpdate,
  type TAdminProfileCreate,
  type TAdminProfileUpdate,
  type TBookingRuleCreate,
  type TBookingRuleUpdate,
  type TShutdownPolicyCreate,
  type TShutdownPolicyUpdate,
} from '@vdi/contracts';
import { api } from '../../../lib/api';
import { queryClient } from '../../../lib/queries';
import { PLANNER_KEY } from '../../../entities/booking/planner-api';

const id = (s: string) => encodeURIComponent(s);

export const RESERVE_KEY = ['admin', 'reserve'] as const;

/** GET /admin/reservables/gpus: the cards with their profiles (the planner's list, with the console's counts). */
export const cardsQuery = { queryKey: [...RESERVE_KEY, 'cards'], queryFn: () => api.get('/admin/reservables/gpus', ZAdminCardList), staleTime: 0 } as const;
export const bookingRulesQuery = (search = '') =>
  ({
    queryKey: [...RESERVE_KEY, 'rules', search],
    queryFn: () => api.get('/admin/booking_priorities', ZBookingRuleList, { query: { per_page: '500', ...(search ? { search } : {}) } }),
    placeholderData: keepPreviousData,
    staleTime: 0,
  }) as const;
export const policiesQuery = (search = '') =>
  ({
    queryKey: [...RESERVE_KEY, 'policies', search],
    queryFn: () => api.get('/admin/shutdown_policies', ZShutdownPolicyList, { query: { per_page: '500', ...(search ? { search } : {}) } }),
    placeholderData: keepPreviousData,
    staleTime: 0,
  }) as const;

/** After a write these lists and the planner's cards are read again (the planner offers a new card at once). */
export const refreshReserve = () =>
  Promise.all([queryClient.invalidateQueries({ queryKey: RESERVE_KEY }), queryClient.invalidateQueries({ queryKey: PLANNER_KEY })]);

export const createCard = (b: TAdminCardCreate) => api.post('/admin/reservables/gpus', b, ZAdminCard);
export const updateCard = (cardId: string, b: TAdminCardUpdate) => api.put(`/admin/reservables/gpus/${id(cardId)}`, b, ZAdminCard);
export const deleteCard = (cardId: string) => api.delete(`/admin/reservables/gpus/${id(cardId)}`);
export const addProfile = (cardId: string, b: TAdminProfileCreate) => api.post(`/admin/reservables/gpus/${id(cardId)}/subitems`, b, ZAdminCard);
export const updateProfile = (cardId: string, profileId: string, b: TAdminProfileUpdate) =>
  api.put(`/admin/reservables/gpus/${id(cardId)}/subitems/${id(profileId)}`, b, ZAdminCard);
export const removeProfile = (cardId: string, profileId: string) => api.delete(`/admin/reservables/gpus/${id(cardId)}/subitems/${id(profileId)}`);

export const createRule = (b: TBookingRuleCreate) => api.post('/admin/booking_priorities', b, ZBookingRule);
export const updateRule = (ruleId: string, b: TBookingRuleUpdate) => api.put(`/admin/booking_priorities/${id(ruleId)}`, b, ZBookingRule);
export const deleteRule = (ruleId: string) => api.delete(`/admin/booking_priorities/${id(ruleId)}`);

export const createPolicy = (b: TShutdownPolicyCreate) => api.post('/admin/shutdown_policies', b, ZShutdownPolicy);
export const updatePolicy = (policyId: string, b: TShutdownPolicyUpdate) => api.put(`/admin/shutdown_policies/${id(policyId)}`, b, ZShutdownPolicy);
export const deletePolicy = (policyId: string) => api.delete(`/admin/shutdown_policies/${id(policyId)}`);
