"""The Kubernetes protobuf messages kubectl sends, as field tables: number, JSON name, type (k8s.io/api tags)."""

from __future__ import annotations

#: message -> "NUMBER:JSON_NAME:TYPE[FLAGS] ...": TYPE is s (string), i (integer), b (bool), y (bytes), f (double),
#: t (Time), d (Duration), q (Quantity), x (IntOrString), r (RawExtension), m / mb / mq (a map of strings, bytes,
#: quantities) or @MESSAGE; FLAGS: * repeated, ? a pointer (kept when zero), ! a field JSON always shows, ^ inline
#: (its fields are the parent's in JSON); a status of type - is skipped (a request's status is ignored). Messages
#: are named GROUP/VERSION:Kind (v1: for the core group).
MESSAGES: dict[str, str] = {
    "v1:AWSElasticBlockStoreVolumeSource": "1:volumeID:s! 2:fsType:s 3:partition:i 4:readOnly:b",
    "v1:Affinity": (
        "1:nodeAffinity:@v1:NodeAffinity? 2:podAffinity:@v1:PodAffinity? 3:podAntiAffinity:@v1:PodAntiAffinity?"),
    "v1:AppArmorProfile": "1:type:s! 2:localhostProfile:s?",
    "v1:AzureDiskVolumeSource": "1:diskName:s! 2:diskURI:s! 3:cachingMode:s? 4:fsType:s? 5:readOnly:b? 6:kind:s?",
    "v1:AzureFileVolumeSource": "1:secretName:s! 2:shareName:s! 3:readOnly:b",
    "v1:CSIVolumeSource": (
        "1:driver:s! 2:readOnly:b? 3:fsType:s? 4:volumeAttributes:m "
        "5:nodePublishSecretRef:@v1:LocalObjectReference?"),
    "v1:Capabilities": "1:add:s* 2:drop:s*",
    "v1:CephFSVolumeSource": (
        "1:monitors:s*! 2:path:s 3:user:s 4:secretFile:s 5:secretRef:@v1:LocalObjectReference? 6:readOnly:b"),
    "v1:CinderVolumeSource": "1:volumeID:s! 2:fsType:s 3:readOnly:b 4:secretRef:@v1:LocalObjectReference?",
    "v1:ClientIPConfig": "1:timeoutSeconds:i?",
    "v1:ClusterTrustBundleProjection": (
        "1:name:s? 2:signerName:s? 3:labelSelector:@LabelSelector? 5:optional:b? 4:path:s! 6:user:i?"),
    "v1:ConfigMap": "1:metadata:@ObjectMeta 4:immutable:b? 2:data:m 3:binaryData:mb",
    "v1:ConfigMapEnvSource": "1:-:@v1:LocalObjectReference^ 2:optional:b?",
    "v1:ConfigMapKeySelector": "1:-:@v1:LocalObjectReference^ 2:key:s! 3:optional:b?",
    "v1:ConfigMapProjection": "1:-:@v1:LocalObjectReference^ 2:items:@v1:KeyToPath* 4:optional:b?",
    "v1:ConfigMapVolumeSource": (
        "1:-:@v1:LocalObjectReference^ 2:items:@v1:KeyToPath* 3:defaultMode:i? 4:optional:b? 5:defaultUser:i?"),
    "v1:Container": (
        "1:name:s! 2:image:s 3:command:s* 4:args:s* 5:workingDir:s 6:ports:@v1:ContainerPort* "
        "19:envFrom:@v1:EnvFromSource* 7:env:@v1:EnvVar* 8:resources:@v1:ResourceRequirements "
        "23:resizePolicy:@v1:ContainerResizePolicy* 24:restartPolicy:s? "
        "25:restartPolicyRules:@v1:ContainerRestartRule* 9:volumeMounts:@v1:VolumeMount* "
        "21:volumeDevices:@v1:VolumeDevice* 10:livenessProbe:@v1:Probe? 11:readinessProbe:@v1:Probe? "
        "22:startupProbe:@v1:Probe? 12:lifecycle:@v1:Lifecycle? 13:terminationMessagePath:s "
        "20:terminationMessagePolicy:s 14:imagePullPolicy:s 15:securityContext:@v1:SecurityContext? 16:stdin:b "
        "17:stdinOnce:b 18:tty:b"),
    "v1:ContainerPort": "1:name:s 2:hostPort:i 3:containerPort:i! 4:protocol:s 5:hostIP:s",
    "v1:ContainerResizePolicy": "1:resourceName:s! 2:restartPolicy:s!",
    "v1:ContainerRestartRule": "1:action:s 2:exitCodes:@v1:ContainerRestartRuleOnExitCodes?",
    "v1:ContainerRestartRuleOnExitCodes": "1:operator:s 2:values:i*",
    "v1:DownwardAPIProjection": "1:items:@v1:DownwardAPIVolumeFile*",
    "v1:DownwardAPIVolumeFile": (
        "1:path:s! 2:fieldRef:@v1:ObjectFieldSelector? 3:resourceFieldRef:@v1:ResourceFieldSelector? 4:mode:i? "
        "5:user:i?"),
    "v1:DownwardAPIVolumeSource": "1:items:@v1:DownwardAPIVolumeFile* 2:defaultMode:i? 3:defaultUser:i?",
    "v1:EmptyDirVolumeSource": "1:medium:s 2:sizeLimit:q? 3:mode:i?",
    "v1:EnvFromSource": "1:prefix:s 2:configMapRef:@v1:ConfigMapEnvSource? 3:secretRef:@v1:SecretEnvSource?",
    "v1:EnvVar": "1:name:s! 2:value:s 3:valueFrom:@v1:EnvVarSource?",
    "v1:EnvVarSource": (
        "1:fieldRef:@v1:ObjectFieldSelector? 2:resourceFieldRef:@v1:ResourceFieldSelector? "
        "3:configMapKeyRef:@v1:ConfigMapKeySelector? 4:secretKeyRef:@v1:SecretKeySelector? "
        "5:fileKeyRef:@v1:FileKeySelector?"),
    "v1:EphemeralContainer": "1:-:@v1:EphemeralContainerCommon^ 2:targetContainerName:s",
    "v1:EphemeralContainerCommon": (
        "1:name:s! 2:image:s 3:command:s* 4:args:s* 5:workingDir:s 6:ports:@v1:ContainerPort* "
        "19:envFrom:@v1:EnvFromSource* 7:env:@v1:EnvVar* 8:resources:@v1:ResourceRequirements "
        "23:resizePolicy:@v1:ContainerResizePolicy* 24:restartPolicy:s? "
        "25:restartPolicyRules:@v1:ContainerRestartRule* 9:volumeMounts:@v1:VolumeMount* "
        "21:volumeDevices:@v1:VolumeDevice* 10:livenessProbe:@v1:Probe? 11:readinessProbe:@v1:Probe? "
        "22:startupProbe:@v1:Probe? 12:lifecycle:@v1:Lifecycle? 13:terminationMessagePath:s "
        "20:terminationMessagePolicy:s 14:imagePullPolicy:s 15:securityContext:@v1:SecurityContext? 16:stdin:b "
        "17:stdinOnce:b 18:tty:b"),
    "v1:EphemeralVolumeSource": "1:volumeClaimTemplate:@v1:PersistentVolumeClaimTemplate?",
    "v1:EvictionResponder": "1:name:s! 2:priority:i?!",
    "v1:ExecAction": "1:command:s*",
    "v1:FCVolumeSource": "1:targetWWNs:s* 2:lun:i? 3:fsType:s 4:readOnly:b 5:wwids:s*",
    "v1:FileKeySelector": "1:volumeName:s! 2:path:s! 3:key:s! 4:optional:b?",
    "v1:FlexVolumeSource": "1:driver:s! 2:fsType:s 3:secretRef:@v1:LocalObjectReference? 4:readOnly:b 5:options:m",
    "v1:FlockerVolumeSource": "1:datasetName:s 2:datasetUUID:s",
    "v1:GCEPersistentDiskVolumeSource": "1:pdName:s! 2:fsType:s 3:partition:i 4:readOnly:b",
    "v1:GRPCAction": "1:port:i! 2:service:s?! 3:mode:s?",
    "v1:GitRepoVolumeSource": "1:repository:s! 2:revision:s 3:directory:s",
    "v1:GlusterfsVolumeSource": "1:endpoints:s! 2:path:s! 3:readOnly:b",
    "v1:HTTPGetAction": "1:path:s 2:port:x! 3:host:s 4:scheme:s 5:httpHeaders:@v1:HTTPHeader* 6:protocol:s?",
    "v1:HTTPHeader": "1:name:s! 2:value:s!",
    "v1:HostAlias": "1:ip:s! 2:hostnames:s*",
    "v1:HostPathVolumeSource": "1:path:s! 2:type:s?",
    "v1:ISCSIVolumeSource": (
        "1:targetPortal:s! 2:iqn:s! 3:lun:i! 4:iscsiInterface:s 5:fsType:s 6:readOnly:b 7:portals:s* "
        "8:chapAuthDiscovery:b 11:chapAuthSession:b 10:secretRef:@v1:LocalObjectReference? 12:initiatorName:s?"),
    "v1:ImageVolumeSource": "1:reference:s 2:pullPolicy:s",
    "v1:KeyToPath": "1:key:s! 2:path:s! 3:mode:i? 4:user:i?",
    "v1:Lifecycle": "1:postStart:@v1:LifecycleHandler? 2:preStop:@v1:LifecycleHandler? 3:stopSignal:s?",
    "v1:LifecycleHandler": (
        "1:exec:@v1:ExecAction? 2:httpGet:@v1:HTTPGetAction? 3:tcpSocket:@v1:TCPSocketAction? "
        "4:sleep:@v1:SleepAction?"),
    "v1:LocalObjectReference": "1:name:s",
    "v1:NFSVolumeSource": "1:server:s! 2:path:s! 3:readOnly:b",
    "v1:Namespace": "1:metadata:@ObjectMeta 2:spec:@v1:NamespaceSpec 3:status:-",
    "v1:NamespaceSpec": "1:finalizers:s*",
    "v1:NodeAffinity": (
        "1:requiredDuringSchedulingIgnoredDuringExecution:@v1:NodeSelector? "
        "2:preferredDuringSchedulingIgnoredDuringExecution:@v1:PreferredSchedulingTerm*"),
    "v1:NodeSelector": "1:nodeSelectorTerms:@v1:NodeSelectorTerm*!",
    "v1:NodeSelectorRequirement": "1:key:s! 2:operator:s! 3:values:s*",
    "v1:NodeSelectorTerm": (
        "1:matchExpressions:@v1:NodeSelectorRequirement* 2:matchFields:@v1:NodeSelectorRequirement*"),
    "v1:ObjectFieldSelector": "1:apiVersion:s 2:fieldPath:s!",
    "v1:ObjectReference": "1:kind:s 2:namespace:s 3:name:s 4:uid:s 5:apiVersion:s 6:resourceVersion:s 7:fieldPath:s",
    "v1:PersistentVolumeClaimSpec": (
        "1:accessModes:s* 4:selector:@LabelSelector? 2:resources:@v1:VolumeResourceRequirements 3:volumeName:s "
        "5:storageClassName:s? 6:volumeMode:s? 7:dataSource:@v1:TypedLocalObjectReference? "
        "8:dataSourceRef:@v1:TypedObjectReference? 9:volumeAttributesClassName:s?"),
    "v1:PersistentVolumeClaimTemplate": "1:metadata:@ObjectMeta 2:spec:@v1:PersistentVolumeClaimSpec!",
    "v1:PersistentVolumeClaimVolumeSource": "1:claimName:s! 2:readOnly:b",
    "v1:PhotonPersistentDiskVolumeSource": "1:pdID:s! 2:fsType:s",
    "v1:Pod": "1:metadata:@ObjectMeta 2:spec:@v1:PodSpec 3:status:-",
    "v1:PodAffinity": (
        "1:requiredDuringSchedulingIgnoredDuringExecution:@v1:PodAffinityTerm* "
        "2:preferredDuringSchedulingIgnoredDuringExecution:@v1:WeightedPodAffinityTerm*"),
    "v1:PodAffinityTerm": (
        "1:labelSelector:@LabelSelector? 2:namespaces:s* 3:topologyKey:s! 4:namespaceSelector:@LabelSelector? "
        "5:matchLabelKeys:s* 6:mismatchLabelKeys:s*"),
    "v1:PodAntiAffinity": (
        "1:requiredDuringSchedulingIgnoredDuringExecution:@v1:PodAffinityTerm* "
        "2:preferredDuringSchedulingIgnoredDuringExecution:@v1:WeightedPodAffinityTerm*"),
    "v1:PodCertificateProjection": (
        "1:signerName:s 2:keyType:s 3:maxExpirationSeconds:i? 4:credentialBundlePath:s 5:keyPath:s "
        "6:certificateChainPath:s 7:userAnnotations:m 8:user:i?"),
    "v1:PodDNSConfig": "1:nameservers:s* 2:searches:s* 3:options:@v1:PodDNSConfigOption*",
    "v1:PodDNSConfigOption": "1:name:s 2:value:s?",
    "v1:PodOS": "1:name:s!",
    "v1:PodReadinessGate": "1:conditionType:s!",
    "v1:PodResourceClaim": "1:name:s! 3:resourceClaimName:s? 4:resourceClaimTemplateName:s?",
    "v1:PodSchedulingGate": "1:name:s!",
    "v1:PodSchedulingGroup": "1:podGroupName:s?",
    "v1:PodSecurityContext": (
        "1:seLinuxOptions:@v1:SELinuxOptions? 8:windowsOptions:@v1:WindowsSecurityContextOptions? 2:runAsUser:i? "
        "6:runAsGroup:i? 3:runAsNonRoot:b? 4:supplementalGroups:i* 12:supplementalGroupsPolicy:s? 5:fsGroup:i? "
        "7:sysctls:@v1:Sysctl* 9:fsGroupChangePolicy:s? 10:seccompProfile:@v1:SeccompProfile? "
        "11:appArmorProfile:@v1:AppArmorProfile? 13:seLinuxChangePolicy:s?"),
    "v1:PodSpec": (
        "1:volumes:@v1:Volume* 20:initContainers:@v1:Container* 2:containers:@v1:Container*! "
        "34:ephemeralContainers:@v1:EphemeralContainer* 3:restartPolicy:s 4:terminationGracePeriodSeconds:i? "
        "5:activeDeadlineSeconds:i? 6:dnsPolicy:s 7:nodeSelector:m 8:serviceAccountName:s 9:serviceAccount:s "
        "21:automountServiceAccountToken:b? 10:nodeName:s 11:hostNetwork:b 12:hostPID:b 13:hostIPC:b "
        "27:shareProcessNamespace:b? 14:securityContext:@v1:PodSecurityContext? "
        "15:imagePullSecrets:@v1:LocalObjectReference* 16:hostname:s 17:subdomain:s 18:affinity:@v1:Affinity? "
        "19:schedulerName:s 22:tolerations:@v1:Toleration* 23:hostAliases:@v1:HostAlias* 24:priorityClassName:s "
        "25:priority:i? 26:dnsConfig:@v1:PodDNSConfig? 28:readinessGates:@v1:PodReadinessGate* "
        "29:runtimeClassName:s? 30:enableServiceLinks:b? 31:preemptionPolicy:s? 32:overhead:mq "
        "33:topologySpreadConstraints:@v1:TopologySpreadConstraint* 35:setHostnameAsFQDN:b? 36:os:@v1:PodOS? "
        "37:hostUsers:b? 38:schedulingGates:@v1:PodSchedulingGate* 39:resourceClaims:@v1:PodResourceClaim* "
        "40:resources:@v1:ResourceRequirements? 41:hostnameOverride:s? 43:schedulingGroup:@v1:PodSchedulingGroup? "
        "44:evictionResponders:@v1:EvictionResponder*"),
    "v1:PodTemplateSpec": "1:metadata:@ObjectMeta 2:spec:@v1:PodSpec",
    "v1:PortworxVolumeSource": "1:volumeID:s! 2:fsType:s 3:readOnly:b",
    "v1:PreferredSchedulingTerm": "1:weight:i! 2:preference:@v1:NodeSelectorTerm!",
    "v1:Probe": (
        "1:-:@v1:ProbeHandler^ 2:initialDelaySeconds:i 3:timeoutSeconds:i 4:periodSeconds:i 5:successThreshold:i "
        "6:failureThreshold:i 7:terminationGracePeriodSeconds:i?"),
    "v1:ProbeHandler": (
        "1:exec:@v1:ExecAction? 2:httpGet:@v1:HTTPGetAction? 3:tcpSocket:@v1:TCPSocketAction? "
        "4:grpc:@v1:GRPCAction?"),
    "v1:ProjectedVolumeSource": "1:sources:@v1:VolumeProjection*! 2:defaultMode:i? 3:defaultUser:i?",
    "v1:QuobyteVolumeSource": "1:registry:s! 2:volume:s! 3:readOnly:b 4:user:s 5:group:s 6:tenant:s",
    "v1:RBDVolumeSource": (
        "1:monitors:s*! 2:image:s! 3:fsType:s 4:pool:s 5:user:s 6:keyring:s 7:secretRef:@v1:LocalObjectReference? "
        "8:readOnly:b"),
    "v1:ResourceClaim": "1:name:s! 2:request:s",
    "v1:ResourceFieldSelector": "1:containerName:s 2:resource:s! 3:divisor:q",
    "v1:ResourceQuota": "1:metadata:@ObjectMeta 2:spec:@v1:ResourceQuotaSpec 3:status:-",
    "v1:ResourceQuotaSpec": "1:hard:mq 2:scopes:s* 3:scopeSelector:@v1:ScopeSelector?",
    "v1:ResourceRequirements": "1:limits:mq 2:requests:mq 3:claims:@v1:ResourceClaim*",
    "v1:SELinuxOptions": "1:user:s 2:role:s 3:type:s 4:level:s",
    "v1:ScaleIOVolumeSource": (
        "1:gateway:s! 2:system:s! 3:secretRef:@v1:LocalObjectReference?! 4:sslEnabled:b 5:protectionDomain:s "
        "6:storagePool:s 7:storageMode:s 8:volumeName:s 9:fsType:s 10:readOnly:b"),
    "v1:ScopeSelector": "1:matchExpressions:@v1:ScopedResourceSelectorRequirement*",
    "v1:ScopedResourceSelectorRequirement": "1:scopeName:s! 2:operator:s! 3:values:s*",
    "v1:SeccompProfile": "1:type:s! 2:localhostProfile:s?",
    "v1:Secret": "1:metadata:@ObjectMeta 5:immutable:b? 2:data:mb 4:stringData:m 3:type:s",
    "v1:SecretEnvSource": "1:-:@v1:LocalObjectReference^ 2:optional:b?",
    "v1:SecretKeySelector": "1:-:@v1:LocalObjectReference^ 2:key:s! 3:optional:b?",
    "v1:SecretProjection": "1:-:@v1:LocalObjectReference^ 2:items:@v1:KeyToPath* 4:optional:b?",
    "v1:SecretVolumeSource": "1:secretName:s 2:items:@v1:KeyToPath* 3:defaultMode:i? 4:optional:b? 5:defaultUser:i?",
    "v1:SecurityContext": (
        "1:capabilities:@v1:Capabilities? 2:privileged:b? 3:seLinuxOptions:@v1:SELinuxOptions? "
        "10:windowsOptions:@v1:WindowsSecurityContextOptions? 4:runAsUser:i? 8:runAsGroup:i? 5:runAsNonRoot:b? "
        "6:readOnlyRootFilesystem:b? 7:allowPrivilegeEscalation:b? 9:procMount:s? "
        "11:seccompProfile:@v1:SeccompProfile? 12:appArmorProfile:@v1:AppArmorProfile?"),
    "v1:Service": "1:metadata:@ObjectMeta 2:spec:@v1:ServiceSpec 3:status:-",
    "v1:ServiceAccount": (
        "1:metadata:@ObjectMeta 2:secrets:@v1:ObjectReference* 3:imagePullSecrets:@v1:LocalObjectReference* "
        "4:automountServiceAccountToken:b?"),
    "v1:ServiceAccountTokenProjection": "1:audience:s 2:expirationSeconds:i? 3:path:s! 4:user:i?",
    "v1:ServicePort": "1:name:s 2:protocol:s 6:appProtocol:s? 3:port:i! 4:targetPort:x 5:nodePort:i",
    "v1:ServiceSpec": (
        "1:ports:@v1:ServicePort* 2:selector:m 3:clusterIP:s 18:clusterIPs:s* 4:type:s 5:externalIPs:s* "
        "7:sessionAffinity:s 8:loadBalancerIP:s 9:loadBalancerSourceRanges:s* 10:externalName:s "
        "11:externalTrafficPolicy:s 12:healthCheckNodePort:i 13:publishNotReadyAddresses:b "
        "14:sessionAffinityConfig:@v1:SessionAffinityConfig? 19:ipFamilies:s* 17:ipFamilyPolicy:s? "
        "20:allocateLoadBalancerNodePorts:b? 21:loadBalancerClass:s? 22:internalTrafficPolicy:s? "
        "23:trafficDistribution:s?"),
    "v1:SessionAffinityConfig": "1:clientIP:@v1:ClientIPConfig?",
    "v1:SleepAction": "1:seconds:i!",
    "v1:StorageOSVolumeSource": (
        "1:volumeName:s 2:volumeNamespace:s 3:fsType:s 4:readOnly:b 5:secretRef:@v1:LocalObjectReference?"),
    "v1:Sysctl": "1:name:s! 2:value:s!",
    "v1:TCPSocketAction": "1:port:x! 2:host:s",
    "v1:Toleration": "1:key:s 2:operator:s 3:value:s 4:effect:s 5:tolerationSeconds:i?",
    "v1:TopologySpreadConstraint": (
        "1:maxSkew:i! 2:topologyKey:s! 3:whenUnsatisfiable:s! 4:labelSelector:@LabelSelector? 5:minDomains:i? "
        "6:nodeAffinityPolicy:s? 7:nodeTaintsPolicy:s? 8:matchLabelKeys:s*"),
    "v1:TypedLocalObjectReference": "1:apiGroup:s?! 2:kind:s! 3:name:s!",
    "v1:TypedObjectReference": "1:apiGroup:s?! 2:kind:s! 3:name:s! 4:namespace:s?",
    "v1:Volume": "1:name:s! 2:-:@v1:VolumeSource^",
    "v1:VolumeDevice": "1:name:s! 2:devicePath:s!",
    "v1:VolumeMount": (
        "1:name:s! 2:readOnly:b 7:recursiveReadOnly:s? 3:mountPath:s! 4:subPath:s 5:mountPropagation:s? "
        "6:subPathExpr:s 8:bindMountOptions:s*"),
    "v1:VolumeProjection": (
        "1:secret:@v1:SecretProjection? 2:downwardAPI:@v1:DownwardAPIProjection? "
        "3:configMap:@v1:ConfigMapProjection? 4:serviceAccountToken:@v1:ServiceAccountTokenProjection? "
        "5:clusterTrustBundle:@v1:ClusterTrustBundleProjection? 6:podCertificate:@v1:PodCertificateProjection?"),
    "v1:VolumeResourceRequirements": "1:limits:mq 2:requests:mq",
    "v1:VolumeSource": (
        "1:hostPath:@v1:HostPathVolumeSource? 2:emptyDir:@v1:EmptyDirVolumeSource? "
        "3:gcePersistentDisk:@v1:GCEPersistentDiskVolumeSource? "
        "4:awsElasticBlockStore:@v1:AWSElasticBlockStoreVolumeSource? 5:gitRepo:@v1:GitRepoVolumeSource? "
        "6:secret:@v1:SecretVolumeSource? 7:nfs:@v1:NFSVolumeSource? 8:iscsi:@v1:ISCSIVolumeSource? "
        "9:glusterfs:@v1:GlusterfsVolumeSource? 10:persistentVolumeClaim:@v1:PersistentVolumeClaimVolumeSource? "
        "11:rbd:@v1:RBDVolumeSource? 12:flexVolume:@v1:FlexVolumeSource? 13:cinder:@v1:CinderVolumeSource? "
        "14:cephfs:@v1:CephFSVolumeSource? 15:flocker:@v1:FlockerVolumeSource? "
        "16:downwardAPI:@v1:DownwardAPIVolumeSource? 17:fc:@v1:FCVolumeSource? "
        "18:azureFile:@v1:AzureFileVolumeSource? 19:configMap:@v1:ConfigMapVolumeSource? "
        "20:vsphereVolume:@v1:VsphereVirtualDiskVolumeSource? 21:quobyte:@v1:QuobyteVolumeSource? "
        "22:azureDisk:@v1:AzureDiskVolumeSource? 23:photonPersistentDisk:@v1:PhotonPersistentDiskVolumeSource? "
        "26:projected:@v1:ProjectedVolumeSource? 24:portworxVolume:@v1:PortworxVolumeSource? "
        "25:scaleIO:@v1:ScaleIOVolumeSource? 27:storageos:@v1:StorageOSVolumeSource? 28:csi:@v1:CSIVolumeSource? "
        "29:ephemeral:@v1:EphemeralVolumeSource? 30:image:@v1:ImageVolumeSource?"),
    "v1:VsphereVirtualDiskVolumeSource": "1:volumePath:s! 2:fsType:s 3:storagePolicyName:s 4:storagePolicyID:s",
    "v1:WeightedPodAffinityTerm": "1:weight:i! 2:podAffinityTerm:@v1:PodAffinityTerm!",
    "v1:WindowsSecurityContextOptions": (
        "1:gmsaCredentialSpecName:s? 2:gmsaCredentialSpec:s? 3:runAsUserName:s? 4:hostProcess:b?"),
    "apps/v1:Deployment": "1:metadata:@ObjectMeta 2:spec:@apps/v1:DeploymentSpec 3:status:-",
    "apps/v1:DeploymentSpec": (
        "1:replicas:i? 2:selector:@LabelSelector?! 3:template:@v1:PodTemplateSpec! "
        "4:strategy:@apps/v1:DeploymentStrategy 5:minReadySeconds:i 6:revisionHistoryLimit:i? 7:paused:b "
        "9:progressDeadlineSeconds:i?"),
    "apps/v1:DeploymentStrategy": "1:type:s 2:rollingUpdate:@apps/v1:RollingUpdateDeployment?",
    "apps/v1:RollingUpdateDeployment": "1:maxUnavailable:x? 2:maxSurge:x?",
    "authentication.k8s.io/v1:BoundObjectReference": "1:kind:s 2:apiVersion:s 3:name:s 4:uid:s",
    "authentication.k8s.io/v1:SelfSubjectReview": "1:metadata:@ObjectMeta 2:status:-",
    "authentication.k8s.io/v1:TokenRequest": (
        "1:metadata:@ObjectMeta 2:spec:@authentication.k8s.io/v1:TokenRequestSpec! 3:status:-"),
    "authentication.k8s.io/v1:TokenRequestSpec": (
        "1:audiences:s*! 4:expirationSeconds:i?! "
        "3:boundObjectRef:@authentication.k8s.io/v1:BoundObjectReference?!"),
    "authorization.k8s.io/v1:FieldSelectorAttributes": "1:rawSelector:s",
    "authorization.k8s.io/v1:LabelSelectorAttributes": "1:rawSelector:s 2:requirements:@LabelSelectorRequirement*",
    "authorization.k8s.io/v1:NonResourceAttributes": "1:path:s 2:verb:s",
    "authorization.k8s.io/v1:ResourceAttributes": (
        "1:namespace:s 2:verb:s 3:group:s 4:version:s 5:resource:s 6:subresource:s 7:name:s "
        "8:fieldSelector:@authorization.k8s.io/v1:FieldSelectorAttributes? "
        "9:labelSelector:@authorization.k8s.io/v1:LabelSelectorAttributes?"),
    "authorization.k8s.io/v1:SelfSubjectAccessReview": (
        "1:metadata:@ObjectMeta 2:spec:@authorization.k8s.io/v1:SelfSubjectAccessReviewSpec! 3:status:-"),
    "authorization.k8s.io/v1:SelfSubjectAccessReviewSpec": (
        "1:resourceAttributes:@authorization.k8s.io/v1:ResourceAttributes? "
        "2:nonResourceAttributes:@authorization.k8s.io/v1:NonResourceAttributes?"),
    "authorization.k8s.io/v1:SelfSubjectRulesReview": (
        "1:metadata:@ObjectMeta 2:spec:@authorization.k8s.io/v1:SelfSubjectRulesReviewSpec! 3:status:-"),
    "authorization.k8s.io/v1:SelfSubjectRulesReviewSpec": "1:namespace:s",
    "autoscaling/v1:CrossVersionObjectReference": "1:kind:s! 2:name:s! 3:apiVersion:s",
    "autoscaling/v1:HorizontalPodAutoscaler": (
        "1:metadata:@ObjectMeta 2:spec:@autoscaling/v1:HorizontalPodAutoscalerSpec 3:status:-"),
    "autoscaling/v1:HorizontalPodAutoscalerSpec": (
        "1:scaleTargetRef:@autoscaling/v1:CrossVersionObjectReference! 2:minReplicas:i? 3:maxReplicas:i! "
        "4:targetCPUUtilizationPercentage:i?"),
    "autoscaling/v2:ContainerResourceMetricSource": "1:name:s! 2:target:@autoscaling/v2:MetricTarget! 3:container:s!",
    "autoscaling/v2:CrossVersionObjectReference": "1:kind:s! 2:name:s! 3:apiVersion:s",
    "autoscaling/v2:ExternalMetricSource": (
        "1:metric:@autoscaling/v2:MetricIdentifier! 2:target:@autoscaling/v2:MetricTarget!"),
    "autoscaling/v2:HPAScalingPolicy": "1:type:s! 2:value:i! 3:periodSeconds:i!",
    "autoscaling/v2:HPAScalingRules": (
        "3:stabilizationWindowSeconds:i? 1:selectPolicy:s? 2:policies:@autoscaling/v2:HPAScalingPolicy* "
        "4:tolerance:q?"),
    "autoscaling/v2:HorizontalPodAutoscaler": (
        "1:metadata:@ObjectMeta 2:spec:@autoscaling/v2:HorizontalPodAutoscalerSpec 3:status:-"),
    "autoscaling/v2:HorizontalPodAutoscalerBehavior": (
        "1:scaleUp:@autoscaling/v2:HPAScalingRules? 2:scaleDown:@autoscaling/v2:HPAScalingRules?"),
    "autoscaling/v2:HorizontalPodAutoscalerSpec": (
        "1:scaleTargetRef:@autoscaling/v2:CrossVersionObjectReference! 2:minReplicas:i? 3:maxReplicas:i! "
        "4:metrics:@autoscaling/v2:MetricSpec* 5:behavior:@autoscaling/v2:HorizontalPodAutoscalerBehavior?"),
    "autoscaling/v2:MetricIdentifier": "1:name:s! 2:selector:@LabelSelector?",
    "autoscaling/v2:MetricSpec": (
        "1:type:s! 2:object:@autoscaling/v2:ObjectMetricSource? 3:pods:@autoscaling/v2:PodsMetricSource? "
        "4:resource:@autoscaling/v2:ResourceMetricSource? "
        "7:containerResource:@autoscaling/v2:ContainerResourceMetricSource? "
        "5:external:@autoscaling/v2:ExternalMetricSource?"),
    "autoscaling/v2:MetricTarget": "1:type:s! 2:value:q? 3:averageValue:q? 4:averageUtilization:i?",
    "autoscaling/v2:ObjectMetricSource": (
        "1:describedObject:@autoscaling/v2:CrossVersionObjectReference! 2:target:@autoscaling/v2:MetricTarget! "
        "3:metric:@autoscaling/v2:MetricIdentifier!"),
    "autoscaling/v2:PodsMetricSource": (
        "1:metric:@autoscaling/v2:MetricIdentifier! 2:target:@autoscaling/v2:MetricTarget!"),
    "autoscaling/v2:ResourceMetricSource": "1:name:s! 2:target:@autoscaling/v2:MetricTarget!",
    "batch/v1:CronJob": "1:metadata:@ObjectMeta 2:spec:@batch/v1:CronJobSpec 3:status:-",
    "batch/v1:CronJobSpec": (
        "1:schedule:s! 8:timeZone:s? 2:startingDeadlineSeconds:i? 3:concurrencyPolicy:s 4:suspend:b? "
        "5:jobTemplate:@batch/v1:JobTemplateSpec! 6:successfulJobsHistoryLimit:i? 7:failedJobsHistoryLimit:i?"),
    "batch/v1:Job": "1:metadata:@ObjectMeta 2:spec:@batch/v1:JobSpec 3:status:-",
    "batch/v1:JobSchedulingConfiguration": "",
    "batch/v1:JobSpec": (
        "1:parallelism:i? 2:completions:i? 3:activeDeadlineSeconds:i? "
        "11:podFailurePolicy:@batch/v1:PodFailurePolicy? 16:successPolicy:@batch/v1:SuccessPolicy? "
        "7:backoffLimit:i? 12:backoffLimitPerIndex:i? 13:maxFailedIndexes:i? 4:selector:@LabelSelector? "
        "5:manualSelector:b? 6:template:@v1:PodTemplateSpec! 8:ttlSecondsAfterFinished:i? 9:completionMode:s? "
        "10:suspend:b? 14:podReplacementPolicy:s? 15:managedBy:s? "
        "17:scheduling:@batch/v1:JobSchedulingConfiguration?"),
    "batch/v1:JobTemplateSpec": "1:metadata:@ObjectMeta 2:spec:@batch/v1:JobSpec",
    "batch/v1:PodFailurePolicy": "1:rules:@batch/v1:PodFailurePolicyRule*!",
    "batch/v1:PodFailurePolicyOnExitCodesRequirement": "1:containerName:s? 2:operator:s! 3:values:i*!",
    "batch/v1:PodFailurePolicyOnPodConditionsPattern": "1:type:s! 2:status:s!",
    "batch/v1:PodFailurePolicyRule": (
        "1:action:s! 2:onExitCodes:@batch/v1:PodFailurePolicyOnExitCodesRequirement? "
        "3:onPodConditions:@batch/v1:PodFailurePolicyOnPodConditionsPattern*"),
    "batch/v1:SuccessPolicy": "1:rules:@batch/v1:SuccessPolicyRule*!",
    "batch/v1:SuccessPolicyRule": "1:succeededIndexes:s? 2:succeededCount:i?",
    "networking.k8s.io/v1:HTTPIngressPath": "1:path:s 3:pathType:s?! 2:backend:@networking.k8s.io/v1:IngressBackend!",
    "networking.k8s.io/v1:HTTPIngressRuleValue": "1:paths:@networking.k8s.io/v1:HTTPIngressPath*!",
    "networking.k8s.io/v1:Ingress": "1:metadata:@ObjectMeta 2:spec:@networking.k8s.io/v1:IngressSpec 3:status:-",
    "networking.k8s.io/v1:IngressBackend": (
        "4:service:@networking.k8s.io/v1:IngressServiceBackend? 3:resource:@v1:TypedLocalObjectReference?"),
    "networking.k8s.io/v1:IngressClass": "1:metadata:@ObjectMeta 2:spec:@networking.k8s.io/v1:IngressClassSpec",
    "networking.k8s.io/v1:IngressClassParametersReference": (
        "1:apiGroup:s? 2:kind:s! 3:name:s! 4:scope:s?! 5:namespace:s?"),
    "networking.k8s.io/v1:IngressClassSpec": (
        "1:controller:s 2:parameters:@networking.k8s.io/v1:IngressClassParametersReference?"),
    "networking.k8s.io/v1:IngressRule": "1:host:s 2:-:@networking.k8s.io/v1:IngressRuleValue^",
    "networking.k8s.io/v1:IngressRuleValue": "1:http:@networking.k8s.io/v1:HTTPIngressRuleValue?",
    "networking.k8s.io/v1:IngressServiceBackend": "1:name:s! 2:port:@networking.k8s.io/v1:ServiceBackendPort",
    "networking.k8s.io/v1:IngressSpec": (
        "4:ingressClassName:s? 1:defaultBackend:@networking.k8s.io/v1:IngressBackend? "
        "2:tls:@networking.k8s.io/v1:IngressTLS* 3:rules:@networking.k8s.io/v1:IngressRule*"),
    "networking.k8s.io/v1:IngressTLS": "1:hosts:s* 2:secretName:s",
    "networking.k8s.io/v1:ServiceBackendPort": "1:name:s 2:number:i",
    "policy/v1:PodDisruptionBudget": "1:metadata:@ObjectMeta 2:spec:@policy/v1:PodDisruptionBudgetSpec 3:status:-",
    "policy/v1:PodDisruptionBudgetSpec": (
        "1:minAvailable:x? 2:selector:@LabelSelector? 3:maxUnavailable:x? 4:unhealthyPodEvictionPolicy:s?"),
    "rbac.authorization.k8s.io/v1:AggregationRule": "1:clusterRoleSelectors:@LabelSelector*",
    "rbac.authorization.k8s.io/v1:ClusterRole": (
        "1:metadata:@ObjectMeta 2:rules:@rbac.authorization.k8s.io/v1:PolicyRule*! "
        "3:aggregationRule:@rbac.authorization.k8s.io/v1:AggregationRule?"),
    "rbac.authorization.k8s.io/v1:ClusterRoleBinding": (
        "1:metadata:@ObjectMeta 2:subjects:@rbac.authorization.k8s.io/v1:Subject* "
        "3:roleRef:@rbac.authorization.k8s.io/v1:RoleRef!"),
    "rbac.authorization.k8s.io/v1:PolicyRule": (
        "1:verbs:s*! 2:apiGroups:s* 3:resources:s* 4:resourceNames:s* 5:nonResourceURLs:s*"),
    "rbac.authorization.k8s.io/v1:Role": "1:metadata:@ObjectMeta 2:rules:@rbac.authorization.k8s.io/v1:PolicyRule*!",
    "rbac.authorization.k8s.io/v1:RoleBinding": (
        "1:metadata:@ObjectMeta 2:subjects:@rbac.authorization.k8s.io/v1:Subject* "
        "3:roleRef:@rbac.authorization.k8s.io/v1:RoleRef!"),
    "rbac.authorization.k8s.io/v1:RoleRef": "1:apiGroup:s! 2:kind:s! 3:name:s!",
    "rbac.authorization.k8s.io/v1:Subject": "1:kind:s! 2:apiGroup:s 3:name:s! 4:namespace:s",
    "scheduling.k8s.io/v1:PriorityClass": (
        "1:metadata:@ObjectMeta 2:value:i! 3:globalDefault:b 4:description:s 5:preemptionPolicy:s?"),
}
