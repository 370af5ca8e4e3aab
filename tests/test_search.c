/* The peak search: it finds every component of gaussian mixtures from the
 * family of bench/peaks (tuning instances) at its centre with its
 * precision as the Hessian, the same modes however the evaluations are
 * batched and threaded, a narrow peak's broad neighbour through the
 * residual, the user's points first; it counts every evaluation; its
 * state survives a checkpoint.  And the CPU backend's evaluator. */
#include <math.h>
#include <string.h>

#include "backend_cpu.h"
#include "error.h"
#include "peaks_family.h"
#include "philox.h"
#include "qmc.h"
#include "search.h"
#include "testutil.h"


/* bench/peaks/family_table.py 2 24 9 33 20 45 61: tuning instances, rotated
 * covariances, d = 4..10, K = 2..5. */
static const instance family[] = {
  {2, 6, 2, "rotated",
   {{0.5160881752141216, 0.42612515742131457, 0.5365065748776405, 0.5540193635978289, 0.4660854746283653, 0.4821262932847461}, {0.5782781059794071, 0.5450778387965454, 0.40237667021586476, 0.526445241050526, 0.38849919162205016, 0.5780267592576069}},
   {{24.599033053111572, -3.6566453793916396, 23.476271944110962, -10.114853772351593, -15.397765604000105, 28.81335937857869, -6.24371323176057, 14.65956188919225, 3.542253143006152, 23.68854583284475, -21.945078754389957, -16.827086975902894, -6.988426468194661, -28.996921489115202, 46.655120492381826, -3.8365226557902776, -22.880614033301928, -8.189646749785759, -17.19592698308381, 16.438715115314146, 26.569315725024616}, {26.466375715237902, 21.142997579803914, 25.333233153088134, -5.337705221661798, -15.143635038664835, 35.72645090688831, -3.162091367852723, -7.56990348072947, 1.95210251451074, 38.61686738404521, 8.79049998831742, 10.606149394721054, 0.015215826584161294, 2.2243739535858977, 29.25026391058877, -0.15382296595018444, -8.531110869615668, 1.8994961801239072, -0.8759672232143793, -2.02666048174295, 32.99651033850813}},
   {12.837492388146554, 13.340239236977906}},
  {24, 4, 3, "rotated",
   {{0.5416866825278988, 0.46247125995416494, 0.5523731109603203, 0.5426631290827119}, {0.5208126203108431, 0.6731281739501638, 0.5435069757928661, 0.5130635137487138}, {0.5726700561271072, 0.34137256356918394, 0.6472355090937532, 0.2211449645777446}},
   {{15.462284508551777, 5.977240144764743, 21.815118170347834, -25.903901652991344, -21.628547020958724, 47.409378237086536, -30.13068490040118, -6.504774897437317, 45.94645917756766, 40.56502393572268}, {37.93531484832211, -19.968237339212564, 35.592621313655265, -5.015066565679638, 0.3093994111475521, 41.16938952197184, 2.0078327371552427, 21.455229689400067, -10.607913811845657, 28.778120851903022}, {29.907197428901398, 1.926055153341412, 52.78826088936549, 9.207901714942706, 27.54900645954718, 42.67632163876771, -8.683376890681373, -5.027491132853226, 4.042725623216664, 40.8863352523069}},
   {8.677316068347867, 9.910046536212018, 10.26518211959515}},
  {9, 5, 4, "rotated",
   {{0.5338223639056878, 0.5090128101541532, 0.46379237699801484, 0.5029326476877126, 0.5206657959350078}, {0.5171140477867753, 0.43127436368232963, 0.6133979275775044, 0.32584463346101195, 0.352834875068371}, {0.5923761223023291, 0.5385684105246781, 0.3752996090196014, 0.6010617155135127, 0.39922112010564526}, {0.7142309815272536, 0.4103026893518601, 0.27635363845679406, 0.3145891350797926, 0.7671376899123918}},
   {{32.36062765851759, 26.382912399149077, 25.350367223649002, 12.001730239718704, 3.693121034983887, 17.928333411125134, -6.622096430725149, 12.815909190572638, -12.767619871811158, 27.124008286862754, -31.864346592450314, 7.703821972913461, 21.681848471220626, 18.72520137531563, 73.18691524378987}, {27.99894406217333, 6.681980164618145, 34.652718810635434, 6.2647182363508325, -0.014451306770127069, 22.583792385542473, 0.2972287032838399, 5.559926195834518, 13.385514083981858, 32.60587000484262, 7.9835155693089765, 9.232662636307117, 13.717356762447487, 5.04558277479725, 43.04923614239018}, {26.903250199489186, 1.4682916275098783, 25.84172057331794, -1.7629968594935232, 11.043067023079443, 33.95896061710242, 15.964942911279605, -15.19207573970211, 28.43691995578888, 64.99637095150995, -37.852594787728634, 7.646535460632307, 7.383439654893545, 16.94112861825907, 60.99508904242629}, {59.415587521249826, -15.681621365330265, 32.53113071368842, 17.272863540085762, -14.330283339378818, 39.73344821756115, 19.4976257837028, 3.625053926014816, -16.437799094042205, 51.67638951401093, 25.58969938930947, -13.248166931759865, 15.54224004121039, 2.565619666148044, 38.18729575187007}},
   {11.629831022410574, 11.957000224532521, 12.803054407177598, 13.611771260862586}},
  {33, 5, 5, "rotated",
   {{0.37940824721917926, 0.4794663494117587, 0.330209337348182, 0.5494395734004572, 0.37881387321005555}, {0.39750993663744094, 0.6968870387683379, 0.6584414040610926, 0.5079159948488676, 0.5781123776902843}, {0.5066198661790832, 0.4884149007563312, 0.5077969027897464, 0.49384501033136513, 0.5108261427454444}, {0.5498636632981664, 0.3643024002819778, 0.7362615184051842, 0.2602004390858827, 0.6634061184717541}, {0.3074502423687981, 0.42736738234984734, 0.5338706236601259, 0.31815679165124905, 0.5580632194116655}},
   {{27.949686907262556, 5.592902569103463, 28.840368430823396, -3.0936349937168433, -1.0522738079404141, 24.88123620222026, 18.006079610800086, 14.358853073134002, -1.2565796798451134, 33.21540601428359, -4.594430432472784, 1.4124830559574182, -7.500417970270614, -0.9911455571939193, 21.568171211287716}, {27.07524733073172, -5.30168841853976, 33.402088391723666, 14.896269880112598, -5.80713936355259, 57.20403652601204, -0.022757080882411494, 5.974596581347187, -0.7954140583516897, 67.81980832944954, 2.3809739841635063, 17.083556432229894, -40.35851576557406, 36.08437712379633, 38.40424305997839}, {15.98187908127242, -25.945443930545785, 61.56215847867896, 0.7738086599607243, -9.047778033304274, 37.919002924132435, -20.934674099753988, 16.637926406353944, 37.91881515192822, 60.06109351032097, 20.295061530121437, 11.483300607327998, -15.08908490932234, 47.809811825575366, 57.03165404286273}, {45.861364468988775, 9.627760967972062, 30.311020155078253, 17.437103826547443, -14.378172174743375, 58.34703017936735, -5.170393880559001, 2.9266628341670846, 4.586500639775012, 69.63577810483845, -25.17786043593317, 14.305410950066623, 20.006407047127677, 11.170730197771364, 68.18922084415337}, {33.23577168969651, -6.209438476341572, 25.61030859706933, 13.973047872652026, -2.804264310893929, 30.565128806582518, 15.706314032165018, 1.3333071886222436, 5.680291575142806, 28.8145933066668, 8.199526574365759, 8.080263160929606, 28.419543353565693, -2.140114303658662, 64.19914729011877}},
   {9.075942229330629, 13.329647680199784, 11.381745011245059, 12.44455507496314, 12.22033757173257}},
  {20, 8, 4, "rotated",
   {{0.5199708351751451, 0.4971975255987758, 0.5062865355954708, 0.5265521091488328, 0.4790069131393678, 0.4932372879524481, 0.5127144317389608, 0.5194066060860953}, {0.48303521837925406, 0.5592624550011484, 0.4473340087127725, 0.566864447476999, 0.49191515105339306, 0.45109208098193027, 0.5223721378370039, 0.43186133054735576}, {0.49100628915632727, 0.5356920095739544, 0.6056734136632422, 0.3943498608752575, 0.3830546049070603, 0.42430790593097967, 0.3901176154545259, 0.44519627138474516}, {0.40622238988840303, 0.4573342088547322, 0.45699968960861886, 0.45889445559717423, 0.5331352077028136, 0.5915149957510791, 0.4795672288313403, 0.5114729593386894}},
   {{31.008615541368, -0.9909154993188681, 32.47885481595116, 16.827088157278837, -22.47110616463913, 24.76865391625756, -10.802009543972426, 8.281033729555936, 12.632037224162634, 35.412274999537104, 11.737363466239824, -7.309869063390217, -7.4233432816234926, 2.957522139245285, 30.16686598138612, 3.5953588972630124, -10.1536592404344, -8.294420413557372, 8.597967624373839, -1.3763620567417498, 38.44772785037819, -10.374179687266082, 8.90817276442287, -9.718013187973389, -10.655568412010004, -3.451120024899847, -18.86474505216778, 78.71961826709547, 21.629850413332083, -22.0845139890425, 4.6479397613740625, -9.961437881624068, 7.026432129025277, 1.1226783555186546, -5.908219982836996, 44.399966763305095}, {37.46048107780423, -22.224830445507465, 26.899899094360283, -9.308021155764985, 7.718395923336929, 16.362594702961765, -14.235549556520663, 8.419405444023024, 10.609893907473106, 29.49274336081495, 30.88659966881375, -25.673510388312867, -7.906050556526545, -6.797079167955449, 36.982979059449185, 24.355697396345924, -10.590280255399254, -10.46052936381631, -12.001823666331743, 19.041560171013757, 25.15002603906793, 23.922863212490928, -25.151647915150328, -10.387522200818784, -3.064001936382785, 13.155024683663594, 21.970273509839323, 29.992448202341194, -7.942376844069896, 20.264550680514635, 7.361281381593807, 3.5388598928664137, -8.489130917993801, 0.5775088261815843, -0.40278474900436395, 23.99032379866574}, {44.48212953340899, -27.49296013721532, 26.164442513532684, 36.31825898883287, -4.951392236029608, 40.84063530693974, 0.03459442497039136, 5.08542338637787, 12.132892941790121, 20.720611951782143, 8.971367028093182, -3.590185150713486, 6.111540049613416, -1.8158573113418157, 27.261058087683733, 23.99197596230694, -3.2079101380087813, 12.404173087253856, -7.620692724689134, 5.411499117944733, 27.471313918748372, -6.225613895520071, 3.998173511495089, -12.370938674919433, -3.8321494642651546, -3.0759976763016055, -14.748606125188854, 35.31012168572275, 45.70142150164922, -4.49948432014802, 14.075871049593866, -11.57467963652075, -8.154665866343612, 22.79830972207485, -8.460575286521705, 40.32612478199507}, {21.22516075841496, -8.777188819436327, 20.817500126308992, 1.597932458540046, -3.6303527053106253, 33.711647434973216, -8.19151682523358, -0.32204869390404384, 8.103746313697462, 27.59152835300232, -6.284879432738077, 5.2218995368810965, 1.852439685803772, 2.713549355256342, 25.982565061781244, -12.573870475959252, 8.941192573818267, -9.968369958861585, 0.47504163293354557, 3.4418969227397715, 31.284655380235616, 2.784680511526726, -7.2716129847497974, 8.346116393267861, 10.328849894098623, 10.268917043618567, 1.5396579992334665, 32.87134564212449, 22.00801887513588, -40.57182378941852, 35.70921873922617, 2.9384195986270165, 1.5946244669355538, -14.057855343359495, -12.487316121943735, 56.63274289127525}},
   {20.804708673547296, 18.03073869326994, 18.95544568096827, 17.316552367738748}},
  {45, 10, 3, "rotated",
   {{0.4945245307961724, 0.6450257514038764, 0.448080284283754, 0.6025955350694056, 0.41489155876100703, 0.5565770394241736, 0.4241838351262277, 0.36251361413955535, 0.46994297702731763, 0.460109956561215}, {0.3932564985015048, 0.30763435763428515, 0.2995067359949643, 0.34893487119464145, 0.6514894786981703, 0.49002575148747296, 0.3363421609161277, 0.39495391746340125, 0.4639109614753433, 0.6958552373858313}, {0.45697292834735664, 0.4915236732160543, 0.5868610638051412, 0.46272016697694757, 0.6061128325522779, 0.41658146290445425, 0.4615070979711219, 0.4361046125222813, 0.41469026922369956, 0.46593990600050106}},
   {{31.854716813877495, -4.834037623741646, 23.208008683091197, 10.19123557172411, -5.530453280057778, 43.124378482874896, 3.873356124359811, 7.33976357738572, 3.0210633266132714, 25.61414651804292, 1.1593005091257766, -1.2208336107635773, -13.557709137522005, 4.970571684866819, 23.20008474797879, -15.163028644660718, 18.333400945009657, -41.89376616169348, 1.0002152438813758, 13.545683075710448, 38.142625608292406, 5.662372853033771, 1.6006989205493773, -11.716952823740066, -0.06293334463517061, 2.5111845554101064, 1.3403602505151937, 27.406255536428873, 19.933492548540826, 7.014975296541812, 5.090623619421009, 2.4343802539514585, -8.41470846242535, 1.7226505668435115, 28.3514264122246, 46.34520566751473, -22.38419829214285, -16.068171228065022, 27.16554718995624, -19.056537212769392, -7.222237812286143, -5.661967586016641, -18.005112464739625, 9.811119718668586, 50.325512662344174, 15.358297809532058, -24.517911663891052, 9.471357606381572, -28.31178076873867, -13.241850723617407, -10.086334654139984, 10.642923233137271, 12.83793904431704, 12.107290947597418, 49.70012661334579}, {31.600601281335287, -4.6826608059143195, 41.59795335658181, 5.470771526543153, 16.211056074946097, 43.255247761968754, 4.87410987493643, -3.7699453414505175, -12.54359918499363, 34.27852870864597, 14.543672868042638, -23.649661020834003, -23.365225484209905, 17.991419658253047, 37.00124109037182, 4.416620968340591, -10.78866583007811, -11.149993281588921, 9.552742433603791, 15.83872636289386, 32.255608629820955, 2.079348468545293, -23.286611246450963, -7.26205238687028, -2.8207866247198, 6.073455117109821, 8.240413764536626, 43.102659662617846, -2.4390467630710315, 23.785711225482835, 33.19384605262646, -17.510010345521525, -16.934085821983928, -3.0185069032475265, -13.652531858401039, 37.29700408877076, 16.440458725777006, 3.7551320218030098, 9.834087075863863, -0.615451840388109, -2.281558652171568, -15.243967476142714, -12.739864133981154, -5.832470868685016, 41.90364720162209, 1.7334887619575983, -2.5177787028966847, 18.481674761705804, 7.99768053025466, 2.487912916699725, 9.75699309957238, 10.465534414722098, -19.945513334273066, 4.8893309359913175, 52.30941192029391}, {27.605736701829613, -15.867788758186302, 22.848008380893226, -16.788380435024656, 3.1049667118950155, 40.17207952860858, 7.2189605472688525, -6.789282849922391, -10.038717578478183, 26.825418243395113, 2.5963570322631244, -0.7570372405304877, -4.725095949136828, -15.98064456445433, 32.39516292509581, 11.62210682627158, -8.543469471736493, -25.463791913687995, -18.529305377167308, -10.751402624047346, 49.45861750136752, 7.033361460004709, -10.103732847124276, 10.921571600119572, -7.9807484791144665, -12.49536521889227, 16.154352475685382, 27.482812723114744, 24.08937421506241, 0.40273512584509114, -5.866426422500363, 0.7390971161458191, -24.408933018465547, 11.9244092045228, 1.7045840641963637, 44.07212224948979, -1.8927222759895415, 5.80956667802891, -3.192581399225209, -20.803304204106002, -4.929623596335163, 19.6195607149736, 20.526559029937935, -8.732146268765696, 39.01101009029173, -0.9985128991810015, -0.8956740557141907, -11.078769164888028, -17.967433536412976, 5.393022876279354, 23.088236968315716, 16.76542702074562, -7.249959989644558, 12.683608186471247, 38.48403958715467}},
   {25.224361031864497, 26.452203450408806, 25.372844980929038}},
  {61, 10, 5, "rotated",
   {{0.5011976159756717, 0.4837764817509001, 0.47526520320915144, 0.4721650984496418, 0.5211103423111692, 0.47609489506572933, 0.46505380794475243, 0.4959367345127128, 0.519862880369918, 0.48130934154073046}, {0.4565698873310352, 0.4267357010132927, 0.5093590365999533, 0.45034546581105017, 0.496896950812975, 0.5708870060982999, 0.504958016710044, 0.5745045619478402, 0.45915441348880565, 0.406896636061447}, {0.5686374690366585, 0.558676870629292, 0.47243423670413237, 0.5335735823512407, 0.420237673938757, 0.5152815456064466, 0.47670458849421593, 0.48050118164184186, 0.5445460930020325, 0.5168512690532331}, {0.5367817606797328, 0.5278588248139563, 0.5212362450788981, 0.5509342931767682, 0.561897879535599, 0.44231339877179193, 0.5543292032471281, 0.4695472644836304, 0.48081958363892063, 0.5059132940327522}, {0.4013967430983923, 0.590569664313433, 0.4062964403652207, 0.5694353006451286, 0.520295823571107, 0.5171230690663821, 0.6090987517963724, 0.49192034656417966, 0.4502259841084752, 0.3841522101209666}},
   {{23.84375829747071, -1.9226578414122601, 32.83310343090581, -2.3221871333619206, -4.406824990811989, 38.67125803516319, 9.240794263501353, -12.980098287465662, -15.257871366372456, 31.08382424795122, -1.2689832574385755, -1.3021490393666082, -8.202082866145169, -12.711726994214663, 25.933055599819944, -8.218512356485721, -6.5634067261567415, -20.64367504929089, 3.6241416532384245, 5.962045203612543, 38.858352205526664, -11.106316486252336, -9.647268386692751, -10.563857616036675, 15.694862236559768, -13.914371956314023, 2.522300579034562, 35.028444861341434, 2.096458629308699, -10.401723843917464, 40.88985838989875, 5.216315274363892, -22.386289798065576, -9.559174905335697, -9.959535612534985, 26.972196320326365, -12.99179198630355, -6.867731446775133, 29.995529754763957, -17.658544604969567, 2.4969399209133067, -23.119223680500564, -33.47384256873267, 5.20241971605485, 42.60479014062268, -0.06742961157505366, -10.615435918033612, -1.8169530191397587, 12.959308359529805, 17.2907953508113, -0.9948570546970924, 2.4891543675523433, 3.004738462247674, 8.696072948945755, 40.41822333945676}, {29.735155292784853, 3.149582116228966, 19.321452989272466, 7.81382906358851, -4.342004420124254, 24.479440813322825, -4.142245934918736, 0.9421694725379351, -19.66053845670876, 35.325191355285206, 1.4440756243145367, 3.7600527565297197, 12.899134772590878, 6.245905012769748, 31.110500195603304, 3.69266369768776, -2.964114715709679, 5.2595097811193465, 6.951447539886109, -0.48536971455479133, 36.11631509451001, 3.37035743825096, -12.74759270612451, 3.155194841142045, -3.8292363783847914, -7.391575113998313, -7.6832306599015245, 31.578099625740784, 7.668184581473927, -3.5015236808460837, -5.654185203976424, 9.089215526360162, 1.3835187802917341, -2.9461678510337554, 10.356874838305194, 28.96301966389605, -2.2816507870352516, 10.906558650861085, -4.868913615197086, -0.8195848797889472, 6.761059494506807, -0.8221207382132986, -14.438111411641021, -2.136939337461409, 37.795185213076195, -8.332591106099459, 11.71616798345554, 2.482429576507608, 22.489002336754222, 2.3393969014480485, 14.912271619304954, -22.233708830335452, -27.543427724335473, 22.21555441095972, 71.11737098586903}, {19.1957779362059, 8.059571060911152, 33.057710504343035, -0.30569285102373805, 9.68441451375725, 32.861086830648944, 2.9326822894689157, -15.355737925705327, -5.199244540545257, 38.72898057253864, 5.7156921755537535, 9.133184346914657, 2.4836763397277273, 0.2732583747505503, 28.818360470592154, 1.3665817087830885, -10.786413470586163, -22.585951854464437, 19.516112345611138, 24.45050886725919, 29.21895629089112, -14.868190765463725, 18.30142913431341, 3.672030636432688, -0.18367149268196964, 11.719446444924625, 9.791895798616254, 34.2166606536345, 4.522879586402879, 1.0089385993232445, 5.394982013492861, -2.4059794955862603, -10.021772047995846, -18.836926330925362, -1.2200350522377048, 29.416107965803445, -5.2380386907845775, -2.923747367037352, -5.165361698662346, -7.341461918973576, 6.288576354402304, -8.657024580255303, -0.18295467528849993, 21.156498481088843, 72.16284199267253, -4.882302239080688, -5.438518509057229, 25.2773337111556, 12.168479422580289, -4.97609770977721, -5.894229230351796, 1.0378660676775298, -1.9461853674273268, 11.658512643330827, 57.00320286516845}, {25.200934981833655, 18.865176203098272, 33.00845252745317, 3.3456498670178223, 24.012298887674568, 30.599598156322816, 12.664719437662328, -12.019952975345936, -9.797020562196275, 22.964084696575508, -11.433398954108032, -1.004560046771068, -21.920486333644465, -7.055033863240773, 30.200918679922513, 9.92040754065666, 10.935295588964374, 3.462317333467843, 9.910840165545876, -11.055628012145881, 46.1258283249585, 18.062295853707056, 3.757269484096113, -13.41366036391906, 12.385074654236496, 11.19752012110998, -23.16506565480654, 54.53721168884481, 12.663184701312499, 35.251874207833836, 9.704928336809942, -9.28986970342494, -0.9007807950323595, -9.335097922566888, 1.3792302045227018, 45.718502339882946, 1.6324142446265135, -9.803947537672585, -35.15493736955754, -8.838157601027897, 20.522144772504415, -17.977542655725905, 16.03463834825081, 5.577217498104498, 45.07755277739703, -1.2033329307739782, -17.634196341745618, -13.473388972591087, 28.250930276272264, 3.7862866185669803, 24.63379355530033, 17.199716130364394, -34.540520728424525, -6.114476892537531, 47.599075703856556}, {29.699424756396052, -8.115742676617971, 24.223432431356727, 9.59052651604423, -3.4447450611389465, 33.83994956533988, -13.623240647619218, 10.662085161347889, -11.466900230785019, 33.212871640113306, -13.702274802883503, 10.707801784801227, -6.847943613200531, -15.445394700014983, 29.39999944289314, 17.016350700890122, 1.855937488669361, -2.3760233195420133, 10.10359518238221, -15.099228142163852, 33.23032500733463, -30.545144260323774, 10.025411005903969, 3.4261159006962747, 2.3348721708870914, 1.3470776667529674, 7.53079597396511, 40.65277859784193, 17.552597205312303, -19.794049641310565, -5.729786544522538, 6.71309128736081, -24.51717742216028, 14.319199682407884, -9.85101639759856, 37.33475516005174, 21.648874078902548, -13.962697970593108, 45.85154138186164, -17.352815341150816, -1.7890080839198277, -7.856918048172972, 11.384765870281168, -7.732066891461834, 64.5474945426882, 9.785334616652776, -12.175041216414906, 0.6154014957577542, -9.522901951424197, 26.175284494566984, -30.799074739835685, -8.109043138402953, -5.560468988956766, 4.66425822015139, 53.42555151411172}},
   {24.419743451293506, 24.998725865053885, 25.640740388945638, 25.459173207881143, 25.912665942579917}},
};
enum { NFAMILY = sizeof family / sizeof family[0] };

/* The integrand as a user gives it (the CPU backend calls it). */
static void mixture_u(const double *x, int dim, void *user, double *out)
{
  (void)dim;
  *out = mixture(user, x);
}

/* An evaluator that counts its calls' points. */
typedef struct {
  const instance *in;
  int64_t points, calls;
  int fail_after; /* calls before it fails, or -1 */
} counted;

static int counted_eval(void *ctx, int64_t n, const double *y, double *f)
{
  counted *c = ctx;
  if (c->fail_after >= 0 && c->calls >= c->fail_after)
    return strata_error(STRATA_EBACKEND, "test evaluator: failing as asked");
  c->calls++;
  c->points += n;
  for (int64_t i = 0; i < n; i++) f[i] = mixture(c->in, y + i * c->in->d);
  return STRATA_OK;
}

/* n points of the mixture (component i % K for point i), as a run's
 * samples near the peaks would be, from Philox: z standard normal, then
 * x = c + U^-1 z by forward substitution. */
static void mixture_points(const instance *in, uint32_t round, int n, double *y, double *f)
{
  const int d = in->d;
  for (int i = 0; i < n; i++) {
    const int k = i % in->K;
    double z[MAXD + 1], *x = y + (size_t)i * d;
    for (int b = 0; 2 * b < d; b++) {
      uint32_t c[4] = {0x7E57u, round, (uint32_t)i, (uint32_t)b};
      strata_philox4x32_10(c, 12345);
      const double u1 = STRATA_U32_TO_UNIT(c[0]), u2 = STRATA_U32_TO_UNIT(c[1]);
      z[2 * b] = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
      z[2 * b + 1] = sqrt(-2.0 * log(u1)) * sin(2.0 * M_PI * u2);
    }
    for (int r = 0, t = 0; r < d; r++) {
      double s = z[r];
      for (int j = 0; j < r; j++, t++) s -= in->u[k][t] * (x[j] - in->c[k][j]);
      x[r] = in->c[k][r] + s / in->u[k][t++];
    }
    f[i] = mixture(in, x);
  }
}

/* The Sobol' round, then rounds from the mixture's own points. */
static strata_search *search_instance(const instance *in, strata_eval_fn eval, void *ctx)
{
  strata_search_params p;
  strata_search_params_default(&p);
  strata_search *s;
  ck_assert_int_eq(strata_search_alloc(in->d, &p, &s), STRATA_OK);
  ck_assert_int_eq(strata_search_sobol(s, 7, eval, ctx), STRATA_OK);
  enum { N = 200 };
  double y[N * MAXD], f[N];
  for (uint32_t r = 0; r < 4; r++) {
    mixture_points(in, r, N, y, f);
    ck_assert_int_eq(strata_search_round(s, N, y, f, 0, eval, ctx), STRATA_OK);
  }
  return s;
}

/* The mode within one Mahalanobis unit of component k, or NULL. */
static const strata_peak *mode_at(const strata_search *s, const instance *in, int k)
{
  for (int j = 0; j < strata_search_nmodes(s); j++)
    if (q2(in, k, strata_search_mode(s, j)->m) <= 1.0) return strata_search_mode(s, j);
  return NULL;
}

START_TEST(test_finds_every_component)
{
  const instance *in = &family[_i];
  const int d = in->d;
  counted c = {in, 0, 0, -1};
  strata_search *s = search_instance(in, counted_eval, &c);
  ck_assert_int_eq(strata_search_nmodes(s), in->K);
  for (int k = 0; k < in->K; k++) {
    const strata_peak *m = mode_at(s, in, k);
    ck_assert_msg(m != NULL, "seed %d: component %d not found", in->seed, k);
    for (int i = 0; i < d; i++)
      ck_assert_msg(fabs(m->m[i] - in->c[k][i]) < 1e-3, "seed %d component %d axis %d: mode at "
                    "%g, centre %g", in->seed, k, i, m->m[i], in->c[k][i]);
    /* The Hessian of -log f at a gaussian's centre is its precision U^T U. */
    double num = 0.0, den = 0.0;
    for (int i = 0; i < d; i++)
      for (int j = 0; j < d; j++) {
        double p = 0.0;
        for (int r = (i > j ? i : j); r < d; r++)
          p += in->u[k][r * (r + 1) / 2 + i] * in->u[k][r * (r + 1) / 2 + j];
        num += pow(m->hess[i * d + j] - p, 2);
        den += p * p;
      }
    ck_assert_msg(sqrt(num / den) < 0.02, "seed %d component %d: Hessian off the precision by "
                  "%g (Frobenius, relative)", in->seed, k, sqrt(num / den));
    /* L L^T = H^-1: L^T H L = I */
    double worst = 0.0;
    for (int a = 0; a < d; a++)
      for (int b = 0; b < d; b++) {
        double v = 0.0;
        for (int i = 0; i < d; i++)
          for (int j = 0; j < d; j++) v += m->chol[i * d + a] * m->hess[i * d + j] * m->chol[j * d + b];
        worst = fmax(worst, fabs(v - (a == b)));
      }
    ck_assert_msg(worst < 1e-9, "seed %d component %d: L^T H L - I up to %g", in->seed, k, worst);
  }
  /* Every evaluation is counted, and only the evaluator's. */
  ck_assert_int_eq(strata_search_evals(s), c.points);
  ck_assert_int_le(strata_search_nascents(s), 32);
  ck_assert_int_eq(strata_search_rounds(s), 5);
  strata_search_free(s);
}
END_TEST

/* The same modes, bit for bit: twice, and through the CPU backend on 1
 * and on 2 threads, which split each batch differently. */
START_TEST(test_deterministic)
{
  const instance *in = &family[_i];
  counted c = {in, 0, 0, -1};
  strata_search *ref = search_instance(in, counted_eval, &c);
  counted c2 = {in, 0, 0, -1};
  strata_search *again = search_instance(in, counted_eval, &c2);
  strata_problem pr = {.dim = in->d, .fu = mixture_u, .user = (void *)in, .name = "mixture"};
  for (int i = 0; i < in->d; i++) pr.upper[i] = 1.0;
  strata_search *by[2];
  for (int t = 0; t < 2; t++) {
    strata_backend *b = strata_backend_cpu_new(t + 1);
    strata_backend_evaluator e = {b, &pr};
    by[t] = search_instance(in, strata_backend_evaluate, &e);
    strata_backend_free(b);
  }
  strata_search *all[3] = {again, by[0], by[1]};
  for (int a = 0; a < 3; a++) {
    ck_assert_int_eq(strata_search_nmodes(all[a]), strata_search_nmodes(ref));
    ck_assert_int_eq(strata_search_evals(all[a]), strata_search_evals(ref));
    for (int j = 0; j < strata_search_nmodes(ref); j++)
      ck_assert_msg(memcmp(strata_search_mode(all[a], j), strata_search_mode(ref, j),
                           sizeof(strata_peak)) == 0, "seed %d: mode %d differs in search %d",
                    in->seed, j, a);
    strata_search_free(all[a]);
  }
  strata_search_free(ref);
}
END_TEST

/* A narrow peak beside a broad one whose centre it hides: at the broad
 * one's centre the narrow one's slope is steeper than the broad one's, so
 * every ascent of log f ends on the narrow peak, and the broad one is the
 * maximum of the residual f - A_narrow alone. */
static const double nb_centre[2][4] = {{0.5, 0.5, 0.5, 0.5}, {0.55, 0.5, 0.5, 0.5}};
static const double nb_sd[2] = {0.05, 0.02};

static double narrow_broad(const double *x)
{
  double f = 0.0;
  for (int k = 0; k < 2; k++) {
    double q = 0.0;
    for (int i = 0; i < 4; i++) q += pow((x[i] - nb_centre[k][i]) / nb_sd[k], 2);
    f += 0.5 * exp(-0.5 * q) / pow(2.0 * M_PI * nb_sd[k] * nb_sd[k], 2);
  }
  return f;
}

static int narrow_broad_eval(void *ctx, int64_t n, const double *y, double *f)
{
  (void)ctx;
  for (int64_t i = 0; i < n; i++) f[i] = narrow_broad(y + 4 * i);
  return STRATA_OK;
}

START_TEST(test_hidden_broad_peak)
{
  /* The broad centre is no mode of f: f rises from it toward the narrow one. */
  double x[4] = {0.5, 0.5, 0.5, 0.5};
  const double f0 = narrow_broad(x);
  x[0] += 1e-3;
  ck_assert(narrow_broad(x) > f0);
  strata_search_params p;
  strata_search_params_default(&p);
  strata_search *s;
  ck_assert_int_eq(strata_search_alloc(4, &p, &s), STRATA_OK);
  ck_assert_int_eq(strata_search_sobol(s, 3, narrow_broad_eval, NULL), STRATA_OK);
  ck_assert_int_eq(strata_search_nmodes(s), 2);
  int seen[2] = {0, 0};
  for (int j = 0; j < 2; j++) {
    const strata_peak *m = strata_search_mode(s, j);
    for (int k = 0; k < 2; k++) {
      double q = 0.0;
      for (int i = 0; i < 4; i++) q += pow((m->m[i] - nb_centre[k][i]) / nb_sd[k], 2);
      if (q < 0.25) seen[k]++;
    }
  }
  ck_assert_msg(seen[0] == 1 && seen[1] == 1, "broad found %d times, narrow %d times", seen[0],
                seen[1]);
  strata_search_free(s);
}
END_TEST

/* Where log f is flat on the cube's scale there is no peak: a constant, a
 * product of powers rising to a corner and a cosine's crests (ridges across
 * the cube, Genz's oscillatory family) give no mode; a single gaussian
 * gives one at its centre, whatever the Sobol' points, also one as broad as
 * the cube along an axis (sd 0.4). */
static int smooth_eval(void *ctx, int64_t n, const double *y, double *f)
{
  const int which = *(const int *)ctx;
  for (int64_t i = 0; i < n; i++) {
    const double *x = y + 4 * i;
    double v = 1.0, q = 0.0;
    for (int d = 0; d < 4; d++) {
      q += (x[d] - 0.3) * (x[d] - 0.3);
      if (which == 1) v *= pow(x[d], 0.25);
    }
    const double r = (x[0] - 0.3) * (x[0] - 0.3) / (2 * 0.4 * 0.4) +
                     (q - (x[0] - 0.3) * (x[0] - 0.3)) / (2 * 0.1 * 0.1);
    const double crest = cos(2 * M_PI * 0.3 + 3.0 * x[0] + 4.0 * x[1] + 2.0 * x[2] + x[3]);
    f[i] = which == 2 ? exp(-q / (2 * 0.1 * 0.1)) : which == 3 ? crest : which == 4 ? exp(-r) : v;
  }
  return STRATA_OK;
}

START_TEST(test_no_peak_where_flat)
{
  const int want[5] = {0, 0, 1, 0, 1};
  for (int which = 0; which < 5; which++) {
    strata_search_params p;
    strata_search_params_default(&p);
    strata_search *s;
    ck_assert_int_eq(strata_search_alloc(4, &p, &s), STRATA_OK);
    ck_assert_int_eq(strata_search_sobol(s, 11, smooth_eval, (void *)&which), STRATA_OK);
    /* (The broad one's ascents may stop apart along its broad axis.) */
    const int n = strata_search_nmodes(s);
    ck_assert_msg(which == 4 ? n >= 1 : n == want[which], "integrand %d: %d modes", which, n);
    if (want[which])
      for (int d = which == 4; d < 4; d++)
        ck_assert(fabs(strata_search_mode(s, 0)->m[d] - 0.3) < 1e-4);
    strata_search_free(s);
  }
}
END_TEST

/* The user's points start the first ascents, each of them, whatever their
 * residual, and their modes come first, marked known. */
START_TEST(test_known_points_first)
{
  const instance *in = &family[2];
  const int d = in->d;
  counted c = {in, 0, 0, -1};
  strata_search_params p;
  strata_search_params_default(&p);
  strata_search *s;
  ck_assert_int_eq(strata_search_alloc(d, &p, &s), STRATA_OK);
  /* Two points a little off the last two components' centres. */
  double y[2 * MAXD], f[2];
  for (int j = 0; j < 2; j++) {
    for (int i = 0; i < d; i++) y[j * d + i] = in->c[in->K - 1 - j][i] + 0.003;
    f[j] = mixture(in, y + j * d);
  }
  ck_assert_int_eq(strata_search_round(s, 2, y, f, 1, counted_eval, &c), STRATA_OK);
  ck_assert_int_eq(strata_search_nascents(s), 2);
  ck_assert_int_eq(strata_search_nmodes(s), 2);
  for (int j = 0; j < 2; j++) {
    const strata_peak *m = strata_search_mode(s, j);
    ck_assert_int_eq(m->known, 1);
    ck_assert_msg(q2(in, in->K - 1 - j, m->m) < 1e-4, "known point %d: mode not at its component",
                  j);
  }
  ck_assert_int_eq(strata_search_sobol(s, 7, counted_eval, &c), STRATA_OK);
  ck_assert_int_gt(strata_search_nmodes(s), 2);
  for (int j = 2; j < strata_search_nmodes(s); j++) ck_assert_int_eq(strata_search_mode(s, j)->known, 0);
  /* A user's point starts an ascent even where the modes explain f. */
  const int before = strata_search_nascents(s), nm = strata_search_nmodes(s);
  ck_assert(log(f[0]) - strata_search_explained(s, y) < log(4.0));
  ck_assert_int_eq(strata_search_round(s, 1, y, f, 1, counted_eval, &c), STRATA_OK);
  ck_assert_int_eq(strata_search_nascents(s), before + 1);
  ck_assert_int_eq(strata_search_nmodes(s), nm);
  ck_assert_int_eq(strata_search_evals(s), c.points);
  strata_search_free(s);
}
END_TEST

/* The state restores into a fresh search as it was; a buffer of another
 * size or dim is refused. */
START_TEST(test_state)
{
  const instance *in = &family[0];
  counted c = {in, 0, 0, -1};
  strata_search *s = search_instance(in, counted_eval, &c);
  const size_t n = strata_search_state_size(s);
  double *buf = malloc(sizeof(double) * n);
  strata_search_state_get(s, buf);
  strata_search_params p;
  strata_search_params_default(&p);
  strata_search *r, *other;
  ck_assert_int_eq(strata_search_alloc(in->d, &p, &r), STRATA_OK);
  ck_assert_int_eq(strata_search_alloc(in->d + 1, &p, &other), STRATA_OK);
  ck_assert_int_eq(strata_search_state_set(r, buf, n - 1), STRATA_EINVAL);
  ck_assert_int_eq(strata_search_state_set(other, buf, n), STRATA_EINVAL);
  ck_assert_int_eq(strata_search_state_set(r, buf, n), STRATA_OK);
  ck_assert_int_eq(strata_search_nmodes(r), strata_search_nmodes(s));
  ck_assert_int_eq(strata_search_evals(r), strata_search_evals(s));
  ck_assert_int_eq(strata_search_rounds(r), strata_search_rounds(s));
  ck_assert_int_eq(strata_search_nascents(r), strata_search_nascents(s));
  for (int j = 0; j < strata_search_nmodes(s); j++)
    ck_assert(memcmp(strata_search_mode(r, j), strata_search_mode(s, j), sizeof(strata_peak)) == 0);
  /* And it goes on as the original does. */
  double y[64 * MAXD], f[64];
  mixture_points(in, 9, 64, y, f);
  counted c1 = {in, 0, 0, -1}, c2 = {in, 0, 0, -1};
  ck_assert_int_eq(strata_search_round(s, 64, y, f, 0, counted_eval, &c1), STRATA_OK);
  ck_assert_int_eq(strata_search_round(r, 64, y, f, 0, counted_eval, &c2), STRATA_OK);
  ck_assert_int_eq(c1.points, c2.points);
  ck_assert_int_eq(strata_search_evals(r), strata_search_evals(s));
  free(buf);
  strata_search_free(s);
  strata_search_free(r);
  strata_search_free(other);
}
END_TEST

/* The Sobol' round's first batch: p.starts points of a scrambled Sobol'
 * net (every axis one point in each of 1024 equal intervals), other than
 * the run's own QMC points under the same seed, and other for another
 * seed. */
typedef struct {
  int dim, seen;
  double first[1024 * 8];
} first_batch;

static int keep_first(void *ctx, int64_t n, const double *y, double *f)
{
  first_batch *fb = ctx;
  if (!fb->seen++) {
    ck_assert_int_eq(n, 1024);
    memcpy(fb->first, y, sizeof(double) * (size_t)n * (size_t)fb->dim);
  }
  for (int64_t i = 0; i < n; i++) f[i] = 0.0; /* nothing to climb */
  return STRATA_OK;
}

START_TEST(test_sobol_starts)
{
  enum { D = 8, N = 1024 };
  strata_search_params p;
  strata_search_params_default(&p);
  static first_batch a = {D, 0, {0}}, b = {D, 0, {0}};
  strata_search *s;
  ck_assert_int_eq(strata_search_alloc(D, &p, &s), STRATA_OK);
  ck_assert_int_eq(strata_search_sobol(s, 42, keep_first, &a), STRATA_OK);
  ck_assert_int_eq(strata_search_evals(s), N);
  ck_assert_int_eq(strata_search_nascents(s), 0);
  strata_search_free(s);
  ck_assert_int_eq(strata_search_alloc(D, &p, &s), STRATA_OK);
  ck_assert_int_eq(strata_search_sobol(s, 43, keep_first, &b), STRATA_OK);
  strata_search_free(s);
  for (int d = 0; d < D; d++) {
    static char hit[N];
    memset(hit, 0, sizeof hit);
    for (int i = 0; i < N; i++) {
      const double v = a.first[i * D + d];
      ck_assert(v > 0.0 && v < 1.0);
      hit[(int)(v * N)]++;
    }
    for (int k = 0; k < N; k++) ck_assert_msg(hit[k] == 1, "axis %d interval %d: %d points", d, k, hit[k]);
  }
  strata_qmc *q = strata_qmc_alloc(STRATA_QMC_SOBOL, D, 1, 10);
  strata_qmc_randomize(q, 42, 0);
  strata_qmc_cursor cur = {.next = -1};
  int same = 0, same_seed = 0;
  for (int i = 0; i < N; i++) {
    double y[D];
    strata_qmc_point(q, &cur, i, y);
    same += memcmp(y, a.first + i * D, sizeof y) == 0;
    same_seed += memcmp(b.first + i * D, a.first + i * D, sizeof y) == 0;
  }
  strata_qmc_free(q);
  ck_assert_int_eq(same, 0);
  ck_assert_int_eq(same_seed, 0);
}
END_TEST

START_TEST(test_errors)
{
  strata_search_params p;
  strata_search_params_default(&p);
  strata_search *s;
  ck_assert_int_eq(strata_search_alloc(0, &p, &s), STRATA_EINVAL);
  ck_assert_int_eq(strata_search_alloc(STRATA_MAX_DIM + 1, &p, &s), STRATA_EINVAL);
  p.max_steps = 0;
  ck_assert_int_eq(strata_search_alloc(4, &p, &s), STRATA_EINVAL);
  strata_search_params_default(&p);
  /* The evaluator's error comes back, with its message. */
  const instance *in = &family[0];
  ck_assert_int_eq(strata_search_alloc(in->d, &p, &s), STRATA_OK);
  for (int after = 0; after < 3; after++) {
    counted c = {in, 0, 0, after};
    ck_assert_int_eq(strata_search_sobol(s, 7, counted_eval, &c), STRATA_EBACKEND);
    ck_assert_str_eq(strata_last_error(), "test evaluator: failing as asked");
  }
  strata_search_free(s);
  /* A backend without an evaluator says so. */
  strata_backend b = {.name = "none"};
  strata_problem pr = {.dim = 1};
  strata_backend_evaluator e = {&b, &pr};
  double y = 0.5, f;
  ck_assert_int_eq(strata_backend_evaluate(&e, 1, &y, &f), STRATA_EBACKEND);
}
END_TEST

/* The CPU backend's evaluator: points mapped onto the box, the adapting
 * value's magnitude in every form, the same on any number of threads. */
static double signed_f(const double *x, int dim, const double *params)
{
  (void)dim;
  return params[0] * (x[0] - 2.0 * x[1]);
}

static void vec_f(const double *x, int dim, const double *params, const strata_table *t, double *out)
{
  (void)dim;
  (void)params;
  (void)t;
  out[0] = x[0];
  out[1] = -3.0 * x[1];
  out[2] = x[0] * x[1];
}

static int over_batch; /* set where a call got more points than the batch */

static void batch_f(int64_t n, const double *x, int dim, void *user, double *out)
{
  (void)user;
  if (n > 7) __atomic_store_n(&over_batch, 1, __ATOMIC_RELAXED);
  for (int64_t i = 0; i < n; i++) vec_f(x + i * dim, dim, NULL, NULL, out + 3 * i);
}

START_TEST(test_cpu_eval)
{
  enum { N = 1000 };
  static double y[N * 2], f[N], g[N];
  for (int i = 0; i < N; i++) {
    y[2 * i] = (i % 37) / 36.0;
    y[2 * i + 1] = (i % 11) / 10.0;
  }
  strata_problem sc = {.f = signed_f, .dim = 2, .lower = {-1.0, 2.0}, .upper = {3.0, 2.5},
                       .params = {2.0}, .nparams = 1};
  strata_problem vc = {.fv = vec_f, .dim = 2, .ncomp = 3, .adapt_comp = -1,
                       .lower = {-1.0, 2.0}, .upper = {3.0, 2.5}};
  strata_problem bc = vc;
  bc.fv = NULL;
  bc.fb = batch_f;
  bc.batch = 7;
  for (int t = 1; t <= 3; t++) {
    strata_backend *b = strata_backend_cpu_new(t);
    ck_assert_int_eq(b->eval(b, &sc, N, y, f), STRATA_OK);
    for (int i = 0; i < N; i++) {
      const double x0 = -1.0 + 4.0 * y[2 * i], x1 = 2.0 + 0.5 * y[2 * i + 1];
      ck_assert(f[i] == fabs(2.0 * (x0 - 2.0 * x1)));
    }
    for (int comp = -1; comp < 3; comp++) {
      vc.adapt_comp = bc.adapt_comp = comp;
      ck_assert_int_eq(b->eval(b, &vc, N, y, f), STRATA_OK);
      ck_assert_int_eq(b->eval(b, &bc, N, y, g), STRATA_OK);
      double few[10]; /* shares below the batch of 7 */
      ck_assert_int_eq(b->eval(b, &bc, 10, y, few), STRATA_OK);
      ck_assert(memcmp(g, few, sizeof few) == 0);
      for (int i = 0; i < N; i++) {
        double x[2] = {-1.0 + 4.0 * y[2 * i], 2.0 + 0.5 * y[2 * i + 1]}, v[3];
        vec_f(x, 2, NULL, NULL, v);
        const double want = comp >= 0 ? fabs(v[comp]) : fabs(v[0]) + fabs(v[1]) + fabs(v[2]);
        ck_assert(f[i] == want);
        ck_assert(g[i] == want);
      }
    }
    strata_backend_free(b);
  }
  ck_assert_int_eq(over_batch, 0);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("search");
  TCase *tc = tcase_create("search");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, test_finds_every_component, 0, NFAMILY);
  tcase_add_loop_test(tc, test_deterministic, 0, 3);
  tcase_add_test(tc, test_hidden_broad_peak);
  tcase_add_test(tc, test_no_peak_where_flat);
  tcase_add_test(tc, test_known_points_first);
  tcase_add_test(tc, test_state);
  tcase_add_test(tc, test_sobol_starts);
  tcase_add_test(tc, test_errors);
  tcase_add_test(tc, test_cpu_eval);
  suite_add_tcase(s, tc);
  return test_run_suite(s);
}
