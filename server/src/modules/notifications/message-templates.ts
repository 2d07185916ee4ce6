/**
 * Texts of the generic live `msg` (the message dialog), per message code and language. Parameters
 * are written `{{name}}` and filled in by the client from the message's `params`.
 */
import { languageCodeOf, type TLanguageCode } from '@vdi/contracts';

type Template = { title: string; body: string };
/** Every language with a catalogue but hi (empty: English). */
type Lang = Exclude<TLanguageCode, 'hi'>;

const TEMPLATES: Record<string, Record<Lang, Template>> = {
  'booking-end': {
    en: { title: 'Your booking is about to end', body: 'The booking of {{name}} ends in {{minutes}} minutes ({{date}}). The desktop will then be stopped: save your work.' },
    ca: { title: 'La vostra reserva està a punt d’acabar', body: 'La reserva de {{name}} acaba d’aquí a {{minutes}} minuts ({{date}}). Llavors l’escriptori s’aturarà: deseu la feina.' },
    es: { title: 'Su reserva está a punto de terminar', body: 'La reserva de {{name}} termina dentro de {{minutes}} minutos ({{date}}). Entonces el escritorio se detendrá: guarde su trabajo.' },
    eu: { title: 'Zure erreserba amaitzear dago', body: '{{name}}(r)en erreserba {{minutes}} minutu barru amaituko da ({{date}}). Orduan mahaigaina geldituko da: gorde zure lana.' },
    fr: { title: 'Votre réservation va bientôt se terminer', body: 'La réservation de {{name}} se termine dans {{minutes}} minutes ({{date}}). Le bureau sera alors arrêté : enregistrez votre travail.' },
    de: { title: 'Ihre Buchung endet bald', body: 'Die Buchung von {{name}} endet in {{minutes}} Minuten ({{date}}). Der Desktop wird dann angehalten: Speichern Sie Ihre Arbeit.' },
    eo: { title: 'Via rezervo baldaŭ finiĝos', body: 'La rezervo de {{name}} finiĝos post {{minutes}} minutoj ({{date}}). Tiam la labortablo haltos: konservu vian laboron.' },
    ko: { title: '예약이 곧 끝납니다', body: '{{name}}의 예약이 {{minutes}}분 후({{date}})에 끝납니다. 그때 데스크톱이 중지되니 작업을 저장하세요.' },
    pl: { title: 'Twoja rezerwacja wkrótce się kończy', body: 'Rezerwacja dla {{name}} kończy się za {{minutes}} min ({{date}}). Pulpit zostanie wtedy zatrzymany: zapisz swoją pracę.' },
    ru: { title: 'Ваше бронирование скоро закончится', body: 'Бронирование для {{name}} закончится через {{minutes}} мин ({{date}}). Затем рабочий стол будет остановлен: сохраните свою работу.' },
    zh_Hans: { title: '您的预约即将结束', body: '{{name}} 的预约将在 {{minutes}} 分钟后（{{date}}）结束。届时桌面将被停止：请保存您的工作。' },
  },
  'plan-end': {
    en: { title: 'The GPU profile is about to end', body: 'The GPU profile of {{name}} stops being available in {{minutes}} minutes ({{date}}). The desktop will then be stopped: save your work.' },
    ca: { title: 'El perfil de GPU està a punt d’acabar', body: 'El perfil de GPU de {{name}} deixa d’estar disponible d’aquí a {{minutes}} minuts ({{date}}). Llavors l’escriptori s’aturarà: deseu la feina.' },
    es: { title: 'El perfil de GPU está a punto de terminar', body: 'El perfil de GPU de {{name}} deja de estar disponible dentro de {{minutes}} minutos ({{date}}). Entonces el escritorio se detendrá: guarde su trabajo.' },
    eu: { title: 'GPU profila amaitzear dago', body: '{{name}}(r)en GPU profila {{minutes}} minutu barru ez da erabilgarri egongo ({{date}}). Orduan mahaigaina geldituko da: gorde zure lana.' },
    fr: { title: 'Le profil GPU va bientôt se terminer', body: 'Le profil GPU de {{name}} ne sera plus disponible dans {{minutes}} minutes ({{date}}). Le bureau sera alors arrêté : enregistrez votre travail.' },
    de: { title: 'Das GPU-Profil endet bald', body: 'Das GPU-Profil von {{name}} steht in {{minutes}} Minuten ({{date}}) nicht mehr zur Verfügung. Der Desktop wird dann angehalten: Speichern Sie Ihre Arbeit.' },
    eo: { title: 'La GPU-profilo baldaŭ finiĝos', body: 'La GPU-profilo de {{name}} ne plu disponeblos post {{minutes}} minutoj ({{date}}). Tiam la labortablo haltos: konservu vian laboron.' },
    ko: { title: 'GPU 프로필이 곧 끝납니다', body: '{{name}}의 GPU 프로필은 {{minutes}}분 후({{date}})부터 사용할 수 없습니다. 그때 데스크톱이 중지되니 작업을 저장하세요.' },
    pl: { title: 'Profil GPU wkrótce przestanie być dostępny', body: 'Profil GPU dla {{name}} przestanie być dostępny za {{minutes}} min ({{date}}). Pulpit zostanie wtedy zatrzymany: zapisz swoją pracę.' },
    ru: { title: 'Профиль GPU скоро закончится', body: 'Профиль GPU для {{name}} перестанет быть доступен через {{minutes}} мин ({{date}}). Затем рабочий стол будет остановлен: сохраните свою работу.' },
    zh_Hans: { title: 'GPU 配置即将结束', body: '{{name}} 的 GPU 配置将在 {{minutes}} 分钟后（{{date}}）不再可用。届时桌面将被停止：请保存您的工作。' },
  },
  'auto-shutdown': {
    en: { title: 'Your desktop will stop soon', body: '{{name}} has reached the longest time it may run and stops automatically in {{minutes}} minutes ({{date}}): save your work.' },
    ca: { title: 'L’escriptori s’aturarà aviat', body: '{{name}} ha arribat al temps màxim que pot funcionar i s’aturarà automàticament d’aquí a {{minutes}} minuts ({{date}}): deseu la feina.' },
    es: { title: 'Su escritorio se detendrá pronto', body: '{{name}} ha llegado al tiempo máximo que puede funcionar y se detendrá automáticamente dentro de {{minutes}} minutos ({{date}}): guarde su trabajo.' },
    eu: { title: 'Zure mahaigaina laster geldituko da', body: '{{name}}(e)k martxan egon daitekeen gehieneko denbora bete du eta {{minutes}} minutu barru geldituko da automatikoki ({{date}}): gorde zure lana.' },
    fr: { title: 'Votre bureau va bientôt s’arrêter', body: '{{name}} a atteint sa durée maximale de fonctionnement et s’arrêtera automatiquement dans {{minutes}} minutes ({{date}}) : enregistrez votre travail.' },
    de: { title: 'Ihr Desktop wird bald angehalten', body: '{{name}} hat die längste erlaubte Laufzeit erreicht und wird in {{minutes}} Minuten ({{date}}) automatisch angehalten: Speichern Sie Ihre Arbeit.' },
    eo: { title: 'Via labortablo baldaŭ haltos', body: '{{name}} atingis la plej longan permesitan funkcidaŭron kaj aŭtomate haltos post {{minutes}} minutoj ({{date}}): konservu vian laboron.' },
    ko: { title: '데스크톱이 곧 중지됩니다', body: '{{name}}이(가) 최대 실행 시간에 도달하여 {{minutes}}분 후({{date}}) 자동으로 중지됩니다. 작업을 저장하세요.' },
    pl: { title: 'Pulpit wkrótce zostanie zatrzymany', body: '{{name}} osiągnął maksymalny czas działania i zostanie automatycznie zatrzymany za {{minutes}} min ({{date}}): zapisz swoją pracę.' },
    ru: { title: 'Рабочий стол скоро будет остановлен', body: '{{name}} достиг максимального времени работы и будет автоматически остановлен через {{minutes}} мин ({{date}}): сохраните свою работу.' },
    zh_Hans: { title: '您的桌面即将停止', body: '{{name}} 已达到允许运行的最长时间，将在 {{minutes}} 分钟后（{{date}}）自动停止：请保存您的工作。' },
  },
  'idle-shutdown': {
    en: { title: 'Your desktop is idle', body: 'Nobody has been viewing {{name}} for a while: it stops automatically in {{minutes}} minutes ({{date}}) unless you open it.' },
    ca: { title: 'L’escriptori està inactiu', body: 'Fa estona que ningú no mira {{name}}: s’aturarà automàticament d’aquí a {{minutes}} minuts ({{date}}) si no l’obriu.' },
    es: { title: 'Su escritorio está inactivo', body: 'Hace un rato que nadie ve {{name}}: se detendrá automáticamente dentro de {{minutes}} minutos ({{date}}) si no lo abre.' },
    eu: { title: 'Zure mahaigaina inaktibo dago', body: 'Aspaldi ez du inork {{name}} ikusi: {{minutes}} minutu barru geldituko da automatikoki ({{date}}) ireki ezean.' },
    fr: { title: 'Votre bureau est inactif', body: 'Personne n’affiche {{name}} depuis un moment : il s’arrêtera automatiquement dans {{minutes}} minutes ({{date}}) si vous ne l’ouvrez pas.' },
    de: { title: 'Ihr Desktop ist inaktiv', body: 'Seit einer Weile sieht niemand {{name}} an: Er wird in {{minutes}} Minuten ({{date}}) automatisch angehalten, wenn Sie ihn nicht öffnen.' },
    eo: { title: 'Via labortablo estas neaktiva', body: 'Jam delonge neniu rigardas {{name}}: ĝi aŭtomate haltos post {{minutes}} minutoj ({{date}}), se vi ne malfermos ĝin.' },
    ko: { title: '데스크톱이 유휴 상태입니다', body: '한동안 아무도 {{name}}을(를) 보고 있지 않습니다. 열지 않으면 {{minutes}}분 후({{date}}) 자동으로 중지됩니다.' },
    pl: { title: 'Pulpit jest bezczynny', body: 'Od pewnego czasu nikt nie ogląda {{name}}: zostanie automatycznie zatrzymany za {{minutes}} min ({{date}}), jeśli go nie otworzysz.' },
    ru: { title: 'Рабочий стол простаивает', body: 'Уже некоторое время никто не просматривает {{name}}: он будет автоматически остановлен через {{minutes}} мин ({{date}}), если вы его не откроете.' },
    zh_Hans: { title: '您的桌面处于空闲状态', body: '已有一段时间没有人查看 {{name}}：如果您不打开它，它将在 {{minutes}} 分钟后（{{date}}）自动停止。' },
  },
  template_creation_failed: {
    en: { title: 'Template not created', body: 'The template {{name}} could not be created; the desktop is as it was.' },
    ca: { title: 'No s’ha creat la plantilla', body: 'No s’ha pogut crear la plantilla {{name}}; l’escriptori és com era.' },
    es: { title: 'No se ha creado la plantilla', body: 'No se ha podido crear la plantilla {{name}}; el escritorio está como estaba.' },
    eu: { title: 'Txantiloia ez da sortu', body: 'Ezin izan da {{name}} txantiloia sortu; mahaigaina lehen bezala dago.' },
    fr: { title: 'Modèle non créé', body: 'Le modèle {{name}} n’a pas pu être créé ; le bureau est resté tel quel.' },
    de: { title: 'Vorlage nicht erstellt', body: 'Die Vorlage {{name}} konnte nicht erstellt werden; der Desktop ist unverändert.' },
    eo: { title: 'Ŝablono ne kreita', body: 'Ne eblis krei la ŝablonon {{name}}; la labortablo restas kiel antaŭe.' },
    ko: { title: '템플릿이 만들어지지 않았습니다', body: '템플릿 {{name}}을(를) 만들 수 없었습니다. 데스크톱은 이전 상태 그대로입니다.' },
    pl: { title: 'Szablon nie został utworzony', body: 'Nie udało się utworzyć szablonu {{name}}; pulpit pozostał bez zmian.' },
    ru: { title: 'Шаблон не создан', body: 'Не удалось создать шаблон {{name}}; рабочий стол остался без изменений.' },
    zh_Hans: { title: '未创建模板', body: '无法创建模板 {{name}}；桌面保持原样。' },
  },
};

export function messageTemplate(name: string, lang: string | null | undefined): (Template & { name: string; lang: Lang }) | null {
  if (!Object.hasOwn(TEMPLATES, name)) return null;
  const code = languageCodeOf(lang);
  const l: Lang = code === 'hi' ? 'en' : code;
  return { name, lang: l, ...TEMPLATES[name]![l] };
}
