/**
 * Texts of the generic live `msg` (the message dialog), per message code and language. Parameters
 * are written `{{name}}` and filled in by the client from the message's `params`.
 */
type Template = { title: string; body: string };
type Lang = 'en' | 'ca' | 'es' | 'eu' | 'fr';

const TEMPLATES: Record<string, Record<Lang, Template>> = {
  'booking-end': {
    en: { title: 'Your booking is about to end', body: 'The booking of {{name}} ends in {{minutes}} minutes ({{date}}). The desktop will then be stopped: save your work.' },
    ca: { title: 'La vostra reserva està a punt d’acabar', body: 'La reserva de {{name}} acaba d’aquí a {{minutes}} minuts ({{date}}). Llavors l’escriptori s’aturarà: deseu la feina.' },
    es: { title: 'Su reserva está a punto de terminar', body: 'La reserva de {{name}} termina dentro de {{minutes}} minutos ({{date}}). Entonces el escritorio se detendrá: guarde su trabajo.' },
    eu: { title: 'Zure erreserba amaitzear dago', body: '{{name}}(r)en erreserba {{minutes}} minutu barru amaituko da ({{date}}). Orduan mahaigaina geldituko da: gorde zure lana.' },
    fr: { title: 'Votre réservation va bientôt se terminer', body: 'La réservation de {{name}} se termine dans {{minutes}} minutes ({{date}}). Le bureau sera alors arrêté : enregistrez votre travail.' },
  },
  'plan-end': {
    en: { title: 'The GPU profile is about to end', body: 'The GPU profile of {{name}} stops being available in {{minutes}} minutes ({{date}}). The desktop will then be stopped: save your work.' },
    ca: { title: 'El perfil de GPU està a punt d’acabar', body: 'El perfil de GPU de {{name}} deixa d’estar disponible d’aquí a {{minutes}} minuts ({{date}}). Llavors l’escriptori s’aturarà: deseu la feina.' },
    es: { title: 'El perfil de GPU está a punto de terminar', body: 'El perfil de GPU de {{name}} deja de estar disponible dentro de {{minutes}} minutos ({{date}}). Entonces el escritorio se detendrá: guarde su trabajo.' },
    eu: { title: 'GPU profila amaitzear dago', body: '{{name}}(r)en GPU profila {{minutes}} minutu barru ez da erabilgarri egongo ({{date}}). Orduan mahaigaina geldituko da: gorde zure lana.' },
    fr: { title: 'Le profil GPU va bientôt se terminer', body: 'Le profil GPU de {{name}} ne sera plus disponible dans {{minutes}} minutes ({{date}}). Le bureau sera alors arrêté : enregistrez votre travail.' },
  },
  'auto-shutdown': {
    en: { title: 'Your desktop will stop soon', body: '{{name}} has reached the longest time it may run and stops automatically in {{minutes}} minutes ({{date}}): save your work.' },
    ca: { title: 'L’escriptori s’aturarà aviat', body: '{{name}} ha arribat al temps màxim que pot funcionar i s’aturarà automàticament d’aquí a {{minutes}} minuts ({{date}}): deseu la feina.' },
    es: { title: 'Su escritorio se detendrá pronto', body: '{{name}} ha llegado al tiempo máximo que puede funcionar y se detendrá automáticamente dentro de {{minutes}} minutos ({{date}}): guarde su trabajo.' },
    eu: { title: 'Zure mahaigaina laster geldituko da', body: '{{name}}(e)k martxan egon daitekeen gehieneko denbora bete du eta {{minutes}} minutu barru geldituko da automatikoki ({{date}}): gorde zure lana.' },
    fr: { title: 'Votre bureau va bientôt s’arrêter', body: '{{name}} a atteint sa durée maximale de fonctionnement et s’arrêtera automatiquement dans {{minutes}} minutes ({{date}}) : enregistrez votre travail.' },
  },
  'idle-shutdown': {
    en: { title: 'Your desktop is idle', body: 'Nobody has been viewing {{name}} for a while: it stops automatically in {{minutes}} minutes ({{date}}) unless you open it.' },
    ca: { title: 'L’escriptori està inactiu', body: 'Fa estona que ningú no mira {{name}}: s’aturarà automàticament d’aquí a {{minutes}} minuts ({{date}}) si no l’obriu.' },
    es: { title: 'Su escritorio está inactivo', body: 'Hace un rato que nadie ve {{name}}: se detendrá automáticamente dentro de {{minutes}} minutos ({{date}}) si no lo abre.' },
    eu: { title: 'Zure mahaigaina inaktibo dago', body: 'Aspaldi ez du inork {{name}} ikusi: {{minutes}} minutu barru geldituko da automatikoki ({{date}}) ireki ezean.' },
    fr: { title: 'Votre bureau est inactif', body: 'Personne n’affiche {{name}} depuis un moment : il s’arrêtera automatiquement dans {{minutes}} minutes ({{date}}) si vous ne l’ouvrez pas.' },
  },
  template_creation_failed: {
    en: { title: 'Template not created', body: 'The template {{name}} could not be created; the desktop is as it was.' },
    ca: { title: 'No s’ha creat la plantilla', body: 'No s’ha pogut crear la plantilla {{name}}; l’escriptori és com era.' },
    es: { title: 'No se ha creado la plantilla', body: 'No se ha podido crear la plantilla {{name}}; el escritorio está como estaba.' },
    eu: { title: 'Txantiloia ez da sortu', body: 'Ezin izan da {{name}} txantiloia sortu; mahaigaina lehen bezala dago.' },
    fr: { title: 'Modèle non créé', body: 'Le modèle {{name}} n’a pas pu être créé ; le bureau est resté tel quel.' },
  },
};

export function messageTemplate(name: string, lang: string | null | undefined): (Template & { name: string; lang: Lang }) | null {
  if (!Object.hasOwn(TEMPLATES, name)) return null;
  const short = (lang ?? 'en').slice(0, 2).toLowerCase();
  const l: Lang = (['en', 'ca', 'es', 'eu', 'fr'] as const).find((x) => x === short) ?? 'en';
  return { name, lang: l, ...TEMPLATES[name]![l] };
}
